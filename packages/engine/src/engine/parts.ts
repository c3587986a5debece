import type { TaskLog } from '../task-log.js';
import type { TaskQueue } from '../task-queue.js';
import type { TaskStore } from '../task-store.js';
import type { Shard } from './shard.js';
import type { ShardSet } from './shard-set.js';

/**
 * An engine's parts, for this repository's tests and benchmarks only (`@longrun/engine/internal`):
 * a door asks the engine (`health`, `queueDepth`, `adminQueues`, `rateLimiter`) instead.
 */
export interface EngineParts {
  /** The configured shards (`shards[0]` is the configured prefix itself). */
  readonly shards: readonly Shard[];
  /** The shard a task id (or a shard number) names. */
  shardOf(id: string | number): Shard;
  /** Shard 0's queues, records and task log. */
  readonly jobs: TaskQueue;
  readonly store: TaskStore;
  readonly log: TaskLog;
}

/** Kept outside the engine's own fields, so its type shows no part to a door. */
const registered = new WeakMap<object, ShardSet>();

/** Called by the engine's constructor. */
export function registerParts(engine: object, shards: ShardSet): void {
  registered.set(engine, shards);
}

/**
 * The parts of `engine` (a `TaskEngine`).
 * @example const { store } = engineParts(api.engine); await store.get(id)
 */
export function engineParts(engine: object): EngineParts {
  const shards = registered.get(engine);
  if (!shards) throw new TypeError('not a TaskEngine');
  const first = shards.first;
  return {
    shards: shards.configured,
    shardOf: (id) => shards.of(id),
    jobs: first.jobs,
    store: first.store,
    log: first.log,
  };
}
