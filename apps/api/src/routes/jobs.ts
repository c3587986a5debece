import { Router, type Request, type RequestHandler, type Response } from 'express';
import {
  fieldErrors,
  idempotencyKeySchema,
  isTerminal,
  Problem,
  resultQuerySchema,
  taskNotFound,
  type TaskRecord,
} from '@longrun/core';
import { jsonBody } from '../http/json-body.js';
import type { TaskService } from '../services/task-service.js';
import type { TaskStream } from '../services/task-stream.js';

/**
 * `/v1/jobs` routes: thin; the service decides, the error handler answers problems. `before`
 * (authentication, limits) runs first on every one of them.
 */
export function jobsRouter(
  service: TaskService,
  stream: TaskStream,
  before: RequestHandler[] = [],
): Router {
  const router = Router();
  if (before.length > 0) router.use(...before);
  const tenantOf = (res: Response) => res.locals.tenant as string;
  /** Loads the caller's task before anything else about the request is looked at. */
  const owned = async (req: Request<{ id: string }>, res: Response, next: () => void) => {
    res.locals.task = await service.owned(tenantOf(res), req.params.id);
    next();
  };
  const taskOf = (res: Response) => res.locals.task as TaskRecord;
  const handleHeaders = (res: Response, record: Pick<TaskRecord, 'status'>) => {
    if (!isTerminal(record.status)) res.setHeader('Retry-After', String(service.retryAfter));
  };

  router.post('/', jsonBody(), async (req, res) => {
    const key = idempotencyKey(req);
    const { handle, created } = await service.submit(tenantOf(res), req.body, {
      idempotencyKey: key,
      requestId: res.locals.requestId as string,
    });
    res
      .status(202)
      .location(`/v1/jobs/${handle.taskId}`)
      .setHeader('Retry-After', String(service.retryAfter));
    if (!created) res.setHeader('Idempotent-Replayed', 'true');
    res.json(handle);
  });

  router.get('/', async (req, res) => {
    res.json(await service.list(tenantOf(res), req.query));
  });

  router.get('/:id', owned, (_req, res) => {
    handleHeaders(res, taskOf(res));
    res.json(service.handle(taskOf(res)));
  });

  router.get('/:id/result', owned, async (req, res) => {
    const query = resultQuerySchema.safeParse(req.query);
    if (!query.success) {
      throw new Problem({
        status: 400,
        title: 'Bad Request',
        detail: 'The query is invalid',
        code: 'invalid-request',
        errors: fieldErrors(query.error),
      });
    }
    let record: TaskRecord | null = taskOf(res);
    if (query.data.wait) {
      const left = new AbortController();
      res.on('close', () => left.abort());
      record = await stream.untilTerminal(record, query.data.wait * 1000, left.signal);
      if (!record) throw taskNotFound();
    }
    res.json(service.result(record));
  });

  router.get('/:id/events', owned, async (req, res) => {
    await stream.serve(taskOf(res), req, res);
  });

  router.post('/:id/cancel', owned, jsonBody({ optional: true }), async (_req, res) => {
    res.json(await service.cancel(taskOf(res)));
  });

  router.post('/:id/input', owned, jsonBody(), async (req, res) => {
    const handle = await service.answer(taskOf(res), req.body);
    handleHeaders(res, handle);
    res.json(handle);
  });

  router.delete('/:id', owned, async (_req, res) => {
    await service.forget(taskOf(res));
    res.status(204).end();
  });

  return router;
}

function idempotencyKey(req: Request): string | undefined {
  const raw = req.headers['idempotency-key'];
  if (raw === undefined) return undefined;
  const parsed = idempotencyKeySchema.safeParse(raw);
  if (!parsed.success) {
    throw new Problem({
      status: 400,
      title: 'Bad Request',
      detail: 'Invalid Idempotency-Key header',
      code: 'invalid-request',
      errors: fieldErrors(parsed.error, 'Idempotency-Key'),
    });
  }
  return parsed.data;
}
