import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { guard } from './errors.js';
import type { TaskQueue } from './task-queue.js';

/** Over the limit: how long until the tenant may try again. */
export interface Limited {
  limited: true;
  retryAfterSeconds: number;
}

/**
 * Per-tenant request rate limit, counted in Redis so it holds across API replicas (and every
 * door). If Redis cannot count, the request goes on (it will meet the same Redis and fail on its
 * own): the limiter never turns an outage into a stream of 429s. The first connection (just after
 * start) is waited for, up to `deadlineMs`, as task calls do: otherwise the first requests after
 * a start would all go through uncounted.
 * @example const limiter = new TenantLimiter(engine.jobs, 100, 2000); await limiter.consume('t')
 */
export class TenantLimiter {
  private readonly limiter: RateLimiterRedis;
  private connectedOnce: boolean;

  constructor(
    private readonly jobs: TaskQueue,
    readonly perSecond: number,
    private readonly deadlineMs: number,
  ) {
    this.limiter = new RateLimiterRedis({
      storeClient: jobs.redis,
      keyPrefix: `${jobs.prefix}:ratelimit`,
      points: perSecond,
      duration: 1,
      rejectIfRedisNotReady: true,
    });
    this.connectedOnce = jobs.redis.status === 'ready';
    if (!this.connectedOnce) jobs.redis.once('ready', () => (this.connectedOnce = true));
  }

  /** Counts one request of `tenant`; `null` when it may go on. */
  async consume(tenant: string): Promise<Limited | null> {
    try {
      // Only a first connection is waited for; during an outage the request goes on at once
      // (and its own Redis call fails), so a 503 does not take two deadlines.
      if (!this.connectedOnce) await guard(() => this.jobs.whenReady(), this.deadlineMs);
      await this.limiter.consume(tenant);
      return null;
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes) {
        return {
          limited: true,
          retryAfterSeconds: Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)),
        };
      }
      return null;
    }
  }
}
