import type { IRouter, Request, RequestHandler, Response } from 'express';
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

/** Where the task routes live. */
const JOBS_PATH = '/v1/jobs';
/**
 * The collection's own route. With the trailing slash it matches `/v1/jobs` and `/v1/jobs/`, and
 * the metrics' `route` label stays `/v1/jobs/`, as it was when these routes were a mounted router.
 */
const COLLECTION = `${JOBS_PATH}/`;

/**
 * The `/v1/jobs` routes, added to `router` (the app itself: a mounted sub-router would cost each
 * request a second routing pass, measurable on a submit: bench/analysis.md). Thin: the service
 * decides, the error handler answers problems. `before` (authentication, limits) runs first on
 * every one of them, and on any other path under `/v1/jobs` before the app's 404.
 */
export function addJobRoutes(
  router: IRouter,
  service: TaskService,
  stream: TaskStream,
  before: RequestHandler[] = [],
): void {
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

  router.post(COLLECTION, ...before, jsonBody(), async (req, res) => {
    const key = idempotencyKey(req);
    const { handle, created } = await service.submit(tenantOf(res), req.body, {
      idempotencyKey: key,
      requestId: res.locals.requestId as string,
    });
    // A task id is a UUID: nothing in the path needs encoding (`res.location` would try).
    res
      .status(202)
      .setHeader('Location', `${JOBS_PATH}/${handle.taskId}`)
      .setHeader('Retry-After', String(service.retryAfter));
    if (!created) res.setHeader('Idempotent-Replayed', 'true');
    res.json(handle);
  });

  router.get(COLLECTION, ...before, async (req, res) => {
    res.json(await service.list(tenantOf(res), req.query));
  });

  // A poll reads only what the handle shows (not the input or answers, whatever their size).
  router.get(`${JOBS_PATH}/:id`, ...before, async (req: Request<{ id: string }>, res) => {
    const view = await service.peek(tenantOf(res), req.params.id);
    handleHeaders(res, view);
    res.json(service.handle(view));
  });

  router.get(`${JOBS_PATH}/:id/result`, ...before, owned, async (req, res) => {
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

  router.get(`${JOBS_PATH}/:id/events`, ...before, owned, async (req, res) => {
    await stream.serve(taskOf(res), req, res);
  });

  router.post(
    `${JOBS_PATH}/:id/cancel`,
    ...before,
    owned,
    jsonBody({ optional: true }),
    async (_req, res) => {
      res.json(await service.cancel(taskOf(res)));
    },
  );

  router.post(`${JOBS_PATH}/:id/input`, ...before, owned, jsonBody(), async (req, res) => {
    const handle = await service.answer(taskOf(res), req.body);
    handleHeaders(res, handle);
    res.json(handle);
  });

  router.delete(`${JOBS_PATH}/:id`, ...before, owned, async (_req, res) => {
    await service.forget(taskOf(res));
    res.status(204).end();
  });

  // Any other path or method under /v1/jobs: authenticated (and limited) all the same, then the
  // app's 404. Only requests no route above answered get here.
  router.use(JOBS_PATH, ...before);
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
