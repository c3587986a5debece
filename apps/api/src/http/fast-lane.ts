import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Request } from 'express';
import type { LeaseBroker, TaskEngine } from '@longrun/engine';
import type { Logger } from 'pino';
import { answerSubmit, answerTask } from '../routes/jobs.js';
import { answerLeases } from '../routes/worker-leases.js';
import { bearerTenant, type ApiKeys } from './auth.js';
import { idempotencyKey } from './idempotency-key.js';
import { readPlainJson } from './json-body.js';
import { answerError } from './problem.js';
import { trackRequest, type RequestObserver } from './request-log.js';
import { traceparentIn } from './trace-context.js';
import type { WorkerLimiter } from './worker-rate-limit.js';

/** The metrics' route labels, as Express labels the routes (see routes/jobs.ts). */
const SUBMIT_ROUTE = '/v1/jobs/';
const TASK_ROUTE = '/v1/jobs/:id';
/** A poll's path as the lane takes it: one plain segment (Express decodes any other form). */
const TASK_PATH = /^\/v1\/jobs\/([A-Za-z0-9_-]{1,128})$/;
/** An HTTP worker's lease call (decision 68): its path, and its route label as Express's. */
const LEASES_PATH = '/v1/worker/leases';

export interface FastLaneDeps {
  engine: TaskEngine;
  keys: ApiKeys;
  logger: Logger;
  observe: RequestObserver;
  /** HTTP workers: their keys and lease broker (lease calls take the lane too). */
  workers?: { keys: ApiKeys; leases: LeaseBroker; limiter?: WorkerLimiter | undefined } | undefined;
}

/**
 * The server's request listener: a submit (`POST /v1/jobs`) that is well formed so far (a known
 * key, a plain JSON body of known length) and a poll (`GET /v1/jobs/<id>`, a known key) are
 * answered here, without Express; every other request, and a submit or poll that is not such,
 * goes to `app` untouched, nothing read (decision 42). The lane does what the Express routes do,
 * with the same parts (request id and log, metrics, the bearer key, the body reader, the
 * engine's call, the answer and its problems), so the answers are the same; it skips Express's
 * own work per request (routing, its request and response objects), a tenth of a submit's CPU
 * on Bun. With a rate limit configured the lane is not used (`createListener`). An HTTP worker's
 * lease call (`POST /v1/worker/leases` with a worker key and a plain JSON body) takes the lane
 * too (decision 68): its route's own function answers it (`answerLeases`).
 */
export function fastLane(app: RequestListener, deps: FastLaneDeps): RequestListener {
  const { engine, keys, logger, observe, workers } = deps;
  const lease: RequestListener = (req, res) => {
    const worker = workers && bearerTenant(workers.keys, req.headers.authorization);
    if (!workers || !worker) return app(req, res);
    const fail = failWith(logger, req, res);
    const wait = workers.limiter?.take(worker) ?? null;
    if (wait !== null) {
      // Over the worker's limit: answered here, the body not read (the connection closes).
      trackRequest(logger, observe, req, res, LEASES_PATH);
      res.setHeader('Connection', 'close');
      return fail(workers.limiter!.problem(wait));
    }
    const taken = readPlainJson(req, (err) => {
      if (err) return fail(err);
      answerLeases(workers.leases, worker, (req as { body?: unknown }).body, res).catch(fail);
    });
    if (!taken) return app(req, res);
    trackRequest(logger, observe, req, res, LEASES_PATH);
  };
  const take: RequestListener = (req, res) => {
    if (req.method === 'POST' && req.url === LEASES_PATH) return lease(req, res);
    const fail = failWith(logger, req, res);
    if (req.method === 'GET') {
      const id = TASK_PATH.exec(req.url ?? '')?.[1];
      const tenant = id === undefined ? null : bearerTenant(keys, req.headers.authorization);
      if (id === undefined || tenant === null) return app(req, res);
      trackRequest(logger, observe, req, res, TASK_ROUTE);
      engine
        .get(tenant, id)
        .then((outcome) => answerTask(req, res, outcome, engine.retryAfter))
        .catch(fail);
      return;
    }
    if (req.method !== 'POST' || (req.url !== '/v1/jobs' && req.url !== '/v1/jobs/')) {
      return app(req, res);
    }
    const tenant = bearerTenant(keys, req.headers.authorization);
    if (tenant === null) return app(req, res);
    let requestId = '';
    const taken = readPlainJson(req, (err) => {
      if (err) return fail(err);
      try {
        const idempotency = idempotencyKey(req as Request);
        engine
          .submit(tenant, (req as { body?: unknown }).body, {
            idempotencyKey: idempotency,
            requestId,
            traceparent: traceparentIn(req.headers.traceparent),
          })
          .then((outcome) => answerSubmit(res, outcome, engine.retryAfter))
          .catch(fail);
      } catch (error) {
        fail(error);
      }
    });
    // Not read: Express takes it whole. Read: the body's end comes on a later turn, after this.
    if (!taken) return app(req, res);
    requestId = trackRequest(logger, observe, req, res, SUBMIT_ROUTE);
  };
  // A throw of the lane's own is answered as Express's router would pass it to the error handler.
  return (req, res) => {
    try {
      take(req, res);
    } catch (err) {
      failWith(logger, req, res)(err);
    }
  };
}

/** Answers an error as the app's error handler does; if that throws too, ends the response. */
function failWith(logger: Logger, req: IncomingMessage, res: ServerResponse) {
  return (err: unknown): void => {
    try {
      answerError(logger, err, req, res);
    } catch {
      res.destroy();
    }
  };
}
