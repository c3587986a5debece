import type { Queue } from 'bullmq';
import { guard } from '../errors.js';
import type { QueueCounts } from '../task-queue.js';
import { TenantLimiter } from '../tenant-limiter.js';
import type { ShardSet } from './shard-set.js';

/**
 * What an operator's tools ask the engine (health checks, metrics, the admin page, the rate
 * limiter), answered from its shards, so a door never holds a queue or a store itself.
 */

/** Whether Redis answered a ping within the deadline. */
export interface EngineHealth {
  redis: 'up' | 'down';
}

/** One queue's job counts on one shard, per BullMQ state (`longrun_queue_jobs`). */
export interface QueueDepth {
  shard: number;
  queue: string;
  counts: QueueCounts;
}

/** A BullMQ queue for the admin page, with the shard it belongs to. */
export interface AdminQueue {
  queue: Queue;
  shard: number;
}

/** Pings Redis on shard 0's connection, within the deadline but never over 1 s (`/readyz`). */
export async function health(shards: ShardSet, deadlineMs: number): Promise<EngineHealth> {
  try {
    await guard(() => shards.first.jobs.ping(), Math.min(deadlineMs, 1000));
    return { redis: 'up' };
  } catch {
    return { redis: 'down' };
  }
}

/**
 * Every queue's counts on every known shard (the configured ones and any a lowered count left
 * behind, so their queues show until drained). Throws when Redis does not answer in time.
 */
export async function queueDepth(shards: ShardSet, deadlineMs: number): Promise<QueueDepth[]> {
  const known = await guard(() => shards.known(), deadlineMs);
  const perShard = await guard(
    () => Promise.all(known.map((s) => s.jobs.countsByQueue())),
    deadlineMs,
  );
  return perShard.flatMap((byQueue, i) =>
    [...byQueue].map(([queue, counts]) => ({ shard: known[i]?.number ?? i, queue, counts })),
  );
}

/** Bytes each tenant's stored tasks take over the known shards (the storage budget's count). */
export async function storedBytes(
  shards: ShardSet,
  tenants: readonly string[],
  deadlineMs: number,
): Promise<Map<string, number>> {
  return guard(async () => {
    const perShard = await Promise.all(
      (await shards.known()).map((s) => s.store.storedBytes(tenants)),
    );
    const total = new Map<string, number>();
    for (const bytes of perShard) {
      for (const [tenant, n] of bytes) total.set(tenant, (total.get(tenant) ?? 0) + n);
    }
    return total;
  }, deadlineMs);
}

/** The configured shards' queues as they are now (a type registered since adds its own). */
export function adminQueues(shards: ShardSet): AdminQueue[] {
  return shards.configured.flatMap(({ number, jobs }) =>
    [...jobs.queues.values(), jobs.webhookQueue].map((queue) => ({ queue, shard: number })),
  );
}

/**
 * A per-tenant request limiter counted in Redis, its counters spread over the shards' prefixes
 * (decision 37).
 */
export function rateLimiter(
  shards: ShardSet,
  perSecond: number,
  deadlineMs: number,
): TenantLimiter {
  return new TenantLimiter(
    shards.first.jobs,
    perSecond,
    deadlineMs,
    shards.configured.map((s) => s.prefix),
  );
}
