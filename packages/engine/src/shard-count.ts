import type { Redis } from 'ioredis';
import { announceShards } from './commands/announce-shards.js';
import { prefixSlot, shardPrefix } from './shards.js';

/**
 * The number of shards tasks have been placed on (decision 37), kept in Redis under the
 * configured prefix (`<prefix>:shards`) so that workers serve every shard without being told:
 * API processes announce their `LONGRUN_SHARDS` at start, and the highest count stays, so a
 * shard no longer given new tasks is still served until its jobs are done.
 */
export class ShardCount {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.key = `${prefix}:shards`;
  }

  /** The highest count announced so far (0: none yet). */
  async read(): Promise<number> {
    const value = await this.redis.get(this.key);
    const count = Number(value ?? 0);
    return Number.isInteger(count) && count > 0 ? count : 0;
  }

  /** Announces `count`; answers the highest count now known. */
  async announce(count: number): Promise<number> {
    return announceShards.run(this.redis, { keys: { count: this.key }, args: { count } });
  }
}

/**
 * How the first `count` shards of `prefix` fall on a Redis Cluster's primaries (`CLUSTER SLOTS`):
 * `host:port` → number of shards, for the API's start-up log. A primary with none is listed at 0.
 */
export async function shardsPerPrimary(
  redis: Redis,
  prefix: string,
  count: number,
): Promise<Map<string, number>> {
  const ranges = (await redis.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
  const perPrimary = new Map<string, number>();
  for (const [, , [host, port]] of ranges) perPrimary.set(`${host}:${port}`, 0);
  for (let i = 0; i < count; i++) {
    const slot = prefixSlot(shardPrefix(prefix, i));
    const range = ranges.find(([from, to]) => slot >= from && slot <= to);
    if (!range) continue;
    const node = `${range[2][0]}:${range[2][1]}`;
    perPrimary.set(node, (perPrimary.get(node) ?? 0) + 1);
  }
  return perPrimary;
}
