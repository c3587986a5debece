import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

const QUIET = ['/healthz', '/readyz', '/metrics', '/admin/queues'];

/** Told of every answered request (the metrics), with its duration. */
export type RequestObserver = (req: Request, res: Response, seconds: number) => void;

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
    const given = req.headers['x-request-id'];
    const id =
      typeof given === 'string' && /^[\x21-\x7e]{1,128}$/.test(given) ? given : randomUUID();
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    const started = performance.now();
    res.on('finish', () => {
      const ms = performance.now() - started;
      observe?.(req, res, ms / 1000);
      const status = res.statusCode;
      const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
      if (!logger.isLevelEnabled(level) || QUIET.some((p) => req.path.startsWith(p))) return;
      logger[level](
        { reqId: id, method: req.method, url: req.originalUrl, status, ms: Math.round(ms) },
        'request',
      );
    });
    next();
  };
}
