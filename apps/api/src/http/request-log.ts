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
 * answer at info (4xx at warn, 5xx at error). The log object is only built when its level is on:
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
    logger[level]({ reqId: id, method: req.method, url, status, ms: Math.round(ms) }, 'request');
  });
  return id;
}

/** The path of a request target, also of an absolute-form one (`http://host/healthz`). */
function pathOf(url: string): string {
  return url.startsWith('/') ? url : url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
}
