import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

const QUIET = ['/healthz', '/readyz', '/metrics', '/admin/queues'];

/**
 * Told of every answered request (the metrics), with its duration; `route` is given for a request
 * the fast lane answered (Express's requests carry theirs in `req.route`).
 */
export type RequestObserver = (
  req: IncomingMessage,
  res: ServerResponse,
  seconds: number,
  route?: string,
) => void;

/**
 * Gives every request an id (a caller's valid `X-Request-Id` is kept, and echoed) in
 * `res.locals.requestId`, so it can travel with a task into the worker's logs, and logs each
 * answer at info (4xx at warn, 5xx at error), with the `traceId` of its `traceparent` when it
 * has a well-formed one. The log object is only built when its level is on:
 * at `warn` a request costs no logging work at all. (This replaced pino-http, whose per-request
 * child logger cost 10-13 % of the CPU of a poll: see docs/BENCHMARKS.md.) The metrics are told
 * from the same `finish` listener: one timer and one listener per request, not two.
 */
export function requestLog(logger: Logger, observe?: RequestObserver) {
  return (req: Request, res: Response, next: NextFunction): void => {
    res.locals.requestId = trackRequest(logger, observe, req, res);
    next();
  };
}

/**
 * `requestLog`'s work on a request of either door (Express or the fast lane): its id, set on the
 * answer and returned, and the one `finish` listener that logs and tells `observe`.
 */
export function trackRequest(
  logger: Logger,
  observe: RequestObserver | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  route?: string,
): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && /^[\x21-\x7e]{1,128}$/.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', id);
  const started = performance.now();
  res.on('finish', () => {
    const ms = performance.now() - started;
    observe?.(req, res, ms / 1000, route);
    const status = res.statusCode;
    const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
    // `originalUrl` is Express's; a fast-lane request's url is its own (nothing was mounted).
    const url = (req as Partial<Request>).originalUrl ?? req.url ?? '';
    if (!logger.isLevelEnabled(level) || QUIET.some((p) => pathOf(url).startsWith(p))) return;
    const line = { reqId: id, method: req.method, url: redactUrl(url), status, ms: Math.round(ms) };
    const traceId = traceIdOf(req.headers.traceparent);
    logger[level](traceId ? { ...line, traceId } : line, 'request');
  });
  return id;
}

/** A lease id in a worker route's path: it carries the lease's lock token (issue 41). */
const LEASE_IN_PATH = /(\/v1\/worker\/leases\/)[^/?#]+/;

/**
 * `url` as a log line may hold it: a lease id (`/v1/worker/leases/{leaseId}/…`) is a secret of
 * the worker holding the lease, as a bearer key is, so it reads `[redacted]`.
 * @example redactUrl('/v1/worker/leases/MAp0…/complete') // '/v1/worker/leases/[redacted]/complete'
 */
export function redactUrl(url: string): string {
  return url.replace(LEASE_IN_PATH, '$1[redacted]');
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The trace id of a well-formed W3C `traceparent` (not all zeros), for the request's log line:
 * the trace a submit's task continues (decision 65), so a log line leads to its trace.
 */
function traceIdOf(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const id = value ? TRACEPARENT.exec(value.trim())?.[1] : undefined;
  return id && !/^0+$/.test(id) ? id : undefined;
}

/** The path of a request target, also of an absolute-form one (`http://host/healthz`). */
function pathOf(url: string): string {
  return url.startsWith('/') ? url : url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
}
