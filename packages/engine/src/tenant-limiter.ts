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
 * @example const limiter = engine.rateLimiter(100); await limiter.consume('t')
 */
export class TenantLimiter {
  /** One per shard prefix: a tenant's counter lives on the shard its name hashes to. */
  private readonly limiters: RateLimiterRedis[];
  private connectedOnce: boolean;

  constructor(
    private readonly jobs: TaskQueue,
    readonly perSecond: number,
    private readonly deadlineMs: number,
    /**
     * The shards' prefixes (default: the queue's own): with several, tenants' counters spread
     * over them, so on a Redis Cluster no one primary counts every request (decision 37).
     */
    prefixes: readonly string[] = [jobs.prefix],
  ) {
    this.limiters = prefixes.map(
      (prefix) =>
        new RateLimiterRedis({
          storeClient: jobs.redis,
          keyPrefix: `${prefix}:ratelimit`,
          points: perSecond,
          duration: 1,
          rejectIfRedisNotReady: true,
        }),
    );
    this.connectedOnce = jobs.redis.status === 'ready';
    if (!this.connectedOnce) jobs.redis.once('ready', () => (this.connectedOnce = true));
  }

  /** Counts one request of `tenant`; `null` when it may go on. */
  async consume(tenant: string): Promise<Limited | null> {
    try {
      // Only a first connection is waited for; during an outage the request goes on at once
      // (and its own Redis call fails), so a 503 does not take two deadlines.
      if (!this.connectedOnce) await guard(() => this.jobs.whenReady(), this.deadlineMs);
      await this.limiterFor(tenant).consume(tenant);
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

  /** The tenant's limiter: FNV-1a of its name, so every API replica picks the same. */
  private limiterFor(tenant: string): RateLimiterRedis {
    if (this.limiters.length === 1) return this.limiters[0] as RateLimiterRedis;
    let hash = 0x811c9dc5;
    for (let i = 0; i < tenant.length; i++) {
      hash = Math.imul(hash ^ tenant.charCodeAt(i), 0x01000193) >>> 0;
    }
    return this.limiters[hash % this.limiters.length] as RateLimiterRedis;
  }
}
