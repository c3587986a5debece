import type { Redis } from 'ioredis';
import { shardPrefix } from '../shards.js';
import { DurableStore } from '../durable-store.js';
import { TaskIndex } from '../task-index.js';
import { TaskLog } from '../task-log.js';
import { TaskMessages } from '../task-messages.js';
import { TaskQueue } from '../task-queue.js';
import { TaskStore } from '../task-store.js';
import type { TaskEvents } from '../task-events.js';
import type { JobTypeDirectory } from '../registry/job-type-directory.js';
import { Submitter, type SubmitDeps } from './submit.js';
import { TaskWatch } from './watch.js';

export interface ShardDeps extends Omit<SubmitDeps, 'store' | 'jobs' | 'shard' | 'untilReady'> {
  connection: Redis;
  events: TaskEvents;
  /** The configured prefix (shard 0's, and every shard's channels). */
  prefix: string;
  types: JobTypeDirectory;
  heartbeatMs: number;
}

/**
 * One shard of the task space (decision 37): its records, index, event lists, side channels and
 * BullMQ queues, all under one hash tag, so every script on a task runs in one slot. The engine
 * holds one per configured shard and picks the one a task id names.
 */
export class Shard {
  readonly prefix: string;
  readonly store: TaskStore;
  /** Durable tasks' writes (issue 29). */
  readonly durable: DurableStore;
  readonly log: TaskLog;
  readonly index: TaskIndex;
  readonly jobs: TaskQueue;
  readonly messages: TaskMessages;
  readonly submitter: Submitter;
  readonly watcher: TaskWatch;

  constructor(
    readonly number: number,
    deps: ShardDeps,
  ) {
    const { connection, prefix } = deps;
    this.prefix = shardPrefix(prefix, number);
    this.store = new TaskStore(connection, this.prefix, deps.maxTtlMs, prefix);
    this.durable = new DurableStore(connection, this.store.keys);
    this.log = new TaskLog(connection, this.store.keys);
    this.index = new TaskIndex(connection, this.store.keys);
    this.jobs = new TaskQueue({
      connection,
      prefix: this.prefix,
      channelPrefix: prefix,
      types: deps.types,
    });
    this.messages = new TaskMessages(connection, this.store.keys, deps.events, deps.redis);
    this.submitter = new Submitter({
      ...deps,
      shard: number,
      store: this.store,
      jobs: this.jobs,
      untilReady: () => deps.redis(() => Promise.resolve()),
    });
    this.watcher = new TaskWatch({
      store: this.store,
      log: this.log,
      events: deps.events,
      pollIntervalMs: deps.pollIntervalMs,
      redis: deps.redis,
      heartbeatMs: deps.heartbeatMs,
    });
  }
}
