import type { NextFunction, Request, Response } from 'express';
import { Problem } from '@longrun/core';

/**
 * Requests per second per HTTP worker (`LONGRUN_WORKER_RATE_LIMIT_RPS`, issue 41), counted in
 * this API process: a one-second window per worker name. In memory on purpose, unlike the
 * tenants' limit: a worker's heartbeats and lease calls are the hot path of decision 68, and a
 * check that costs a Redis round trip would cost the storm it stops. With N replicas a worker
 * may make N times the limit in all; each replica's share of the load stays bounded.
 */
export class WorkerLimiter {
  private readonly windows = new Map<string, { start: number; used: number }>();

  /** @example new WorkerLimiter(200).take('py') // null: go on */
  constructor(readonly perSecond: number) {}

  /** Counts one request of `worker`: `null` when it may go on, else the seconds to wait. */
  take(worker: string, now = Date.now()): number | null {
    let window = this.windows.get(worker);
    if (!window || now - window.start >= 1000) {
      // Worker names come from LONGRUN_WORKER_KEYS: the map holds at most one entry per name.
      window = { start: now, used: 0 };
      this.windows.set(worker, window);
    }
    if (window.used >= this.perSecond)
      return Math.max(1, Math.ceil((window.start + 1000 - now) / 1000));
    window.used += 1;
    return null;
  }

  /** The `429` a request over the limit answers, with `Retry-After`. */
  problem(retryAfter: number): Problem {
    return new Problem({
      status: 429,
      title: 'Too Many Requests',
      detail: `More than ${this.perSecond} requests per second for this worker key (LONGRUN_WORKER_RATE_LIMIT_RPS)`,
      code: 'rate-limited',
      retryAfter,
    });
  }
}

/** The limit as middleware, after `requireWorker` (it reads `res.locals.worker`). */
export function workerRateLimit(limiter: WorkerLimiter) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const wait = limiter.take(res.locals.worker as string);
    if (wait !== null) throw limiter.problem(wait);
    next();
  };
}
