import type { Redis } from 'ioredis';

/** Sets the count unless a higher one is there; answers the count now stored. */
const ANNOUNCE = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local count = tonumber(ARGV[1])
if count > current then
  redis.call('SET', KEYS[1], ARGV[1])
  return count
end
return current`;

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
    return Number(await this.redis.eval(ANNOUNCE, 1, this.key, String(count)));
  }
}
