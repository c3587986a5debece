import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  ErrorRequestHandler,
  IRouter,
  NextFunction,
  Request,
  RequestHandler,
  Response,
} from 'express';
import {
  fieldErrors,
  getJobQuerySchema,
  isTerminal,
  Problem,
  resultQuerySchema,
  type TaskHandle,
} from '@longrun/core';
import type { BatchItemOutcome, GetOutcome, SubmitOutcome, TaskEngine } from '@longrun/engine';
import type { Logger } from 'pino';
import { idempotencyKey } from '../http/idempotency-key.js';
import { jsonBody } from '../http/json-body.js';
import { sendJson } from '../http/send-json.js';
import { failure, invalidProblem, submitProblem } from '../http/outcomes.js';
import { serveEvents } from '../http/sse.js';
import { holdStream, StreamSlots } from '../http/stream-slots.js';
import { mount } from '../openapi/operation.js';
import {
  answerJobInput,
  cancelJob,
  deleteJob,
  getJob,
  getJobResult,
  JOBS_PATH,
  listJobs,
  streamJobEvents,
  submitJob,
  submitJobs,
} from './jobs.operations.js';
import { traceparentIn } from '../http/trace-context.js';

/**
 * The answer to a submit, from either door (this route or the fast lane): 202 with the handle,
 * `Location` and `Retry-After`, or the outcome's problem, thrown.
 */
export function answerSubmit(
  res: ServerResponse,
  outcome: SubmitOutcome,
  retryAfter: number,
): void {
  if (outcome.kind !== 'created' && outcome.kind !== 'replayed') {
    throw submitProblem(outcome, retryAfter);
  }
  // A task id is a UUID: nothing in the path needs encoding (`res.location` would try).
  res.statusCode = 202;
  res.setHeader('Location', `${JOBS_PATH}/${outcome.task.taskId}`);
  res.setHeader('Retry-After', String(retryAfter));
  if (outcome.kind === 'replayed') res.setHeader('Idempotent-Replayed', 'true');
  sendJson(res, outcome.task);
}

/**
 * The answer to a poll, from either door: 200 with the handle (and `Retry-After` while it is not
 * finished), or the outcome's problem (404), thrown.
 */
export function answerTask(
  req: IncomingMessage,
  res: ServerResponse,
  outcome: GetOutcome,
  retryAfter: number,
): void {
  if (outcome.kind !== 'found') throw failure(outcome, 'read', retryAfter);
  if (!isTerminal(outcome.task.status)) res.setHeader('Retry-After', String(retryAfter));
  res.statusCode = 200;
  sendJson(res, outcome.task, req);
}

/**
 * The `/v1/jobs` routes, added to `router` (the app itself: a mounted sub-router would cost each
 * request a second routing pass, measurable on a submit: bench/analysis.md). Thin: each parses
 * what is HTTP's (headers, query, body), calls the engine and answers its outcome; problems go to
 * the error handler. `before` (authentication, limits) runs first on every one of them, and on
 * any other path under `/v1/jobs` before the app's 404. An event stream holds one of `streams`'
 * slots while it is open.
 */
export function addJobRoutes(
  router: IRouter,
  engine: TaskEngine,
  before: RequestHandler[] = [],
  logger?: Logger,
  streams: StreamSlots = new StreamSlots({ perTenant: 0, total: 0 }),
): void {
  const tenantOf = (res: Response) => res.locals.tenant as string;
  const retryAfter = () => engine.retryAfter;
  /**
   * A request on a task whose body or query was refused: a foreign or missing task answers 404
   * all the same, so the refusal says nothing about another tenant's task. Costs nothing when
   * the request is well formed.
   */
  const ownerFirst: ErrorRequestHandler = (err, req, res, next: NextFunction) => {
    const refusal = err instanceof Problem && [400, 413, 415].includes(err.status);
    if (!refusal || res.locals.tenant === undefined) return next(err);
    engine.get(tenantOf(res), (req.params as { id: string }).id).then(
      (known) => next(known.kind === 'found' ? err : failure(known, 'read', retryAfter())),
      () => next(err),
    );
  };
  const withHeaders = (res: Response, handle: TaskHandle) => {
    if (!isTerminal(handle.status)) res.setHeader('Retry-After', String(retryAfter()));
    return handle;
  };

  mount(router, submitJob, ...before, jsonBody(), async (req, res) => {
    const outcome = await engine.submit(tenantOf(res), req.body, {
      idempotencyKey: idempotencyKey(req),
      requestId: res.locals.requestId as string,
      traceparent: traceparentIn(req.headers.traceparent),
    });
    answerSubmit(res, outcome, retryAfter());
  });

  // Up to 100 submits in one request: each item answered on its own, in order (207).
  mount(router, submitJobs, ...before, jsonBody(), async (req, res) => {
    const outcome = await engine.submitBatch(tenantOf(res), req.body, {
      requestId: res.locals.requestId as string,
      traceparent: traceparentIn(req.headers.traceparent),
    });
    if (outcome.kind === 'invalid') throw invalidProblem(outcome);
    for (const r of outcome.results) {
      if (r.kind === 'error') logger?.error({ err: r.error }, 'a batch item failed');
    }
    res.status(207).json({ results: outcome.results.map((r) => batchItem(r, retryAfter())) });
  });

  mount(router, listJobs, ...before, async (req, res) => {
    const outcome = await engine.list(tenantOf(res), req.query);
    if (outcome.kind === 'invalid') throw invalidProblem(outcome);
    res.json({ tasks: outcome.tasks, nextCursor: outcome.nextCursor });
  });

  // A poll reads only what the handle shows (not the input or answers, whatever their size).
  mount<{ id: string }>(router, getJob, ...before, async (req, res) => {
    const tenant = tenantOf(res);
    const query = getJobQuerySchema.safeParse(req.query);
    if (!query.success) {
      // As for the result: another tenant's id never learns more than 404.
      const known = await engine.get(tenant, req.params.id);
      if (known.kind !== 'found') throw failure(known, 'read', retryAfter());
      throw badRequest('The query is invalid', fieldErrors(query.error));
    }
    const input = query.data.include === 'input';
    answerTask(req, res, await engine.get(tenant, req.params.id, { input }), retryAfter());
  });

  mount<{ id: string }>(router, getJobResult, ...before, async (req, res) => {
    const tenant = tenantOf(res);
    const query = resultQuerySchema.safeParse(req.query);
    if (!query.success) {
      // The task's existence is checked first: another tenant's id never learns more than 404.
      const known = await engine.get(tenant, req.params.id);
      if (known.kind !== 'found') throw failure(known, 'read', retryAfter());
      throw badRequest('The query is invalid', fieldErrors(query.error));
    }
    const left = new AbortController();
    res.on('close', () => left.abort());
    const outcome = await engine.result(
      tenant,
      req.params.id,
      (query.data.wait ?? 0) * 1000,
      left.signal,
    );
    if (outcome.kind !== 'finished') throw failure(outcome, 'read', retryAfter());
    res.json(outcome.result);
  });

  mount<{ id: string }>(
    router,
    streamJobEvents,
    ...before,
    holdStream(streams),
    async (req: Request<{ id: string }>, res: Response) => {
      await serveEvents(engine, tenantOf(res), req, res);
    },
    ownerFirst,
  );

  mount<{ id: string }>(
    router,
    cancelJob,
    ...before,
    jsonBody({ optional: true }),
    ownerFirst,
    async (req: Request<{ id: string }>, res: Response) => {
      const outcome = await engine.cancel(tenantOf(res), req.params.id);
      if (outcome.kind !== 'cancelled') throw failure(outcome, 'cancelled', retryAfter());
      res.json(outcome.task);
    },
  );

  mount<{ id: string }>(
    router,
    answerJobInput,
    ...before,
    jsonBody(),
    ownerFirst,
    async (req: Request<{ id: string }>, res: Response) => {
      const outcome = await engine.answer(tenantOf(res), req.params.id, req.body);
      if (outcome.kind !== 'answered') throw failure(outcome, 'answered', retryAfter());
      res.json(withHeaders(res, outcome.task));
    },
  );

  mount<{ id: string }>(router, deleteJob, ...before, async (req, res) => {
    const outcome = await engine.forget(tenantOf(res), req.params.id);
    if (outcome.kind !== 'forgotten') throw failure(outcome, 'forgotten', retryAfter());
    res.status(204).end();
  });

  // Any other path or method under /v1/jobs: authenticated (and limited) all the same, then the
  // app's 404. Only requests no route above answered get here.
  router.use(JOBS_PATH, ...before);
}

/** One batch item's answer: what `POST /v1/jobs` would have answered, as a status and a body. */
export function batchItem(outcome: BatchItemOutcome, retryAfter: number): Record<string, unknown> {
  if (outcome.kind === 'created') return { status: 202, task: outcome.task };
  if (outcome.kind === 'replayed') return { status: 202, replayed: true, task: outcome.task };
  const problem = batchItemProblem(outcome, retryAfter);
  return { status: problem.status, problem: problem.toJSON() };
}

/** Why a batch item created nothing, as the single submit's problem would say. */
function batchItemProblem(
  outcome: Exclude<BatchItemOutcome, { kind: 'created' | 'replayed' }>,
  retryAfter: number,
): Problem {
  const retry = 'retry it with the same idempotencyKey';
  switch (outcome.kind) {
    case 'unavailable':
      return new Problem({
        status: 503,
        title: 'Service Unavailable',
        detail: `The task store (Redis) did not answer for this task; ${retry}`,
        code: 'store-unavailable',
        retryAfter: 2,
      });
    case 'storeFull':
      return new Problem({
        status: 507,
        title: 'Insufficient Storage',
        detail: `The task store is full; ${retry} later`,
        code: 'store-full',
        retryAfter: 30,
      });
    case 'error':
      return new Problem({ status: 500, title: 'Internal Server Error', code: 'internal' });
    default:
      return submitProblem(outcome, retryAfter);
  }
}

function badRequest(detail: string, errors: { path: string; message: string }[]): Problem {
  return new Problem({
    status: 400,
    title: 'Bad Request',
    detail,
    code: 'invalid-request',
    errors,
  });
}
