import type { NextFunction, Request, Response } from 'express';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { Problem } from '@longrun/core';
import { guard, type TaskQueue } from '@longrun/engine';

/**
 * Per-tenant request rate limit (mount it only when `perSecond` > 0), counted in Redis so it holds across API replicas. Over the limit:
 * `429` + `Retry-After`. If Redis cannot count, the request goes on (it will meet the same Redis
 * and answer 503 itself): the limiter never turns an outage into a stream of 429s. The first
 * connection (just after start) is waited for, up to `deadlineMs`, as the task routes do:
 * otherwise the first requests after a start would all go through uncounted.
 * @example app.use(rateLimit(tasks, 100, 2000))
 */
export function rateLimit(tasks: TaskQueue, perSecond: number, deadlineMs: number) {
  const limiter = new RateLimiterRedis({
    storeClient: tasks.redis,
    keyPrefix: `${tasks.prefix}:ratelimit`,
    points: perSecond,
    duration: 1,
    rejectIfRedisNotReady: true,
  });
  let connectedOnce = tasks.redis.status === 'ready';
  if (!connectedOnce) tasks.redis.once('ready', () => (connectedOnce = true));
  return async (_req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      // Only a first connection is waited for; during an outage the request goes on at once
      // (and its own Redis call answers 503), so a 503 does not take two deadlines.
      if (!connectedOnce) await guard(() => tasks.whenReady(), deadlineMs);
      await limiter.consume(res.locals.tenant as string);
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes) {
        throw new Problem({
          status: 429,
          title: 'Too Many Requests',
          detail: `More than ${perSecond} requests per second for this tenant`,
          code: 'rate-limited',
          retryAfter: Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)),
        });
      }
    }
    next();
  };
}
