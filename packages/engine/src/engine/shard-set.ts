import type { Redis } from 'ioredis';
import { ShardCount } from '../shard-count.js';
import { MAX_SHARDS, shardOfTaskId } from '../shards.js';
import { Shard, type ShardDeps } from './shard.js';

/**
 * The shards an engine places tasks on and reads them from (decision 37): the configured ones,
 * and past them those a lowered count left behind, which task ids still name.
 */
export class ShardSet {
  /** The shards new tasks go to (`configured[0]` is the configured prefix itself). */
  readonly configured: readonly Shard[];
  /** Shards past the configured count that task ids still name (the count was lowered). */
  private readonly retired = new Map<number, Shard>();
  /** Where the next task without an idempotency key goes (round robin from a random start). */
  private nextShard: number;
  /** `<prefix>:shards`: the highest shard count announced. */
  private readonly shardCount: ShardCount;
  /** That count as last read or announced here (at least the configured one). */
  private announced: number;

  constructor(
    count: number,
    private readonly deps: ShardDeps & { connection: Redis },
  ) {
    if (!Number.isInteger(count) || count < 1 || count > MAX_SHARDS) {
      throw new RangeError(`shards must be an integer from 1 to ${MAX_SHARDS}`);
    }
    this.configured = Array.from({ length: count }, (_, i) => new Shard(i, deps));
    this.nextShard = Math.floor(Math.random() * count);
    this.shardCount = new ShardCount(deps.connection, deps.prefix);
    this.announced = count;
  }

  /** Shard 0: the configured prefix's. */
  get first(): Shard {
    return this.configured[0] as Shard;
  }

  /** The next configured shard in turn, for a task nothing else places. */
  next(): Shard {
    const shard = this.configured[this.nextShard] as Shard;
    this.nextShard = (this.nextShard + 1) % this.configured.length;
    return shard;
  }

  /** Announces the configured count in Redis (`ShardCount`); the highest one announced. */
  async announce(): Promise<number> {
    const highest = await this.shardCount.announce(this.configured.length);
    this.announced = Math.max(this.announced, highest);
    return highest;
  }

  /** The configured shards and those past them up to the highest count announced (read now). */
  async known(): Promise<readonly Shard[]> {
    const highest = await this.shardCount.read();
    this.announced = Math.max(this.announced, highest);
    const known = [...this.configured];
    for (let i = this.configured.length; i < this.announced; i++) known.push(this.of(i));
    return known;
  }

  /**
   * The shard a task id (or a shard number) names: a configured one, or one the count no longer
   * includes. An id naming a shard no API ever announced (made up: no such task) reads shard 0,
   * where it is missing like any unknown id, so no shard is made for it.
   */
  of(id: string | number): Shard {
    const number = typeof id === 'number' ? id : shardOfTaskId(id);
    const configured = this.configured[number];
    if (configured) return configured;
    if (number >= this.announced) return this.first;
    let retired = this.retired.get(number);
    if (!retired) {
      retired = new Shard(number, this.deps);
      this.retired.set(number, retired);
    }
    return retired;
  }

  /** Closes every shard's queues. */
  async close(): Promise<void> {
    await Promise.all([...this.configured, ...this.retired.values()].map((s) => s.jobs.close()));
  }
}
