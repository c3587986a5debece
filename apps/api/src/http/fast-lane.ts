import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Request } from 'express';
import type { TaskEngine } from '@longrun/engine';
import type { Logger } from 'pino';
import { answerSubmit } from '../routes/jobs.js';
import { bearerTenant, type ApiKeys } from './auth.js';
import { idempotencyKey } from './idempotency-key.js';
import { readPlainJson } from './json-body.js';
import { answerError } from './problem.js';
import { trackRequest, type RequestObserver } from './request-log.js';

/** The metrics' route label of a submit, as Express labels the route (see routes/jobs.ts). */
const SUBMIT_ROUTE = '/v1/jobs/';

export interface FastLaneDeps {
  engine: TaskEngine;
  keys: ApiKeys;
  logger: Logger;
  observe: RequestObserver;
}

/**
 * The server's request listener: a submit (`POST /v1/jobs`) that is well formed so far (a known
 * key, a plain JSON body of known length) is answered here, without Express; every other request,
 * and a submit that is not such, goes to `app` untouched (decision 42). The lane does what the
 * Express route does, with the same parts (request id and log, metrics, the bearer key, the body
 * reader, the engine's submit, the answer and its problems), so the answers are the same; it
 * skips Express's own work per request (routing, its request and response objects), which was a
 * tenth of a submit's CPU on Bun. With a rate limit configured, submits go to Express too.
 */
export function fastLane(app: RequestListener, deps: FastLaneDeps): RequestListener {
  const { engine, keys, logger, observe } = deps;
  return (req, res) => {
    if (req.method !== 'POST' || (req.url !== '/v1/jobs' && req.url !== '/v1/jobs/')) {
      return app(req, res);
    }
    const tenant = bearerTenant(keys, req.headers.authorization);
    if (tenant === null) return app(req, res);
    let requestId = '';
    const taken = readPlainJson(req, (err) => {
      if (err) answerError(logger, err, req, res);
      else submit(engine, logger, tenant, requestId, req, res);
    });
    // Not read: Express takes it whole. Read: the body's end comes on a later turn, after this.
    if (!taken) return app(req, res);
    requestId = trackRequest(logger, observe, req, res, SUBMIT_ROUTE);
  };
}

function submit(
  engine: TaskEngine,
  logger: Logger,
  tenant: string,
  requestId: string,
  req: IncomingMessage & { body?: unknown },
  res: ServerResponse,
): void {
  let idempotency: string | undefined;
  try {
    idempotency = idempotencyKey(req as Request);
  } catch (err) {
    return answerError(logger, err, req, res);
  }
  engine
    .submit(tenant, req.body, { idempotencyKey: idempotency, requestId })
    .then((outcome) => answerSubmit(res, outcome, engine.retryAfter))
    .catch((err: unknown) => answerError(logger, err, req, res));
}
