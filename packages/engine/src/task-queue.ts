import { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  captureAdd,
  FAIR_PRIORITY_PLACEHOLDER,
  queueKeys,
  quickAdd,
  type JobAdd,
} from './bullmq-adapter.js';
import { classifyRedisError, guard } from './errors.js';
import { QUEUE_NAME, queueNameFor, taskKeys, WEBHOOK_QUEUE_NAME } from './keys.js';
import {
  jobData,
  jobOptions,
  type EnqueueOptions,
  type JobPlacement,
  type JobPlacements,
  type JobRecord,
} from './task-job.js';

export type { EnqueueOptions, JobPlacement, JobPlacements, JobRecord } from './task-job.js';

export interface TaskQueueOptions {
  /** A producer connection (see `createRedis`); shared by BullMQ and the task store. */
  connection: Redis;
  prefix: string;
  /** The configured prefix when `prefix` is a shard's (see `taskKeys`). */
  channelPrefix?: string | undefined;
  /**
   * The job types, to know which queue each runs on (types may have queues of their own): the
   * registry as the API reads it (`JobTypeDirectory`), or a worker's own catalog.
   */
  types?: JobPlacements;
}

/** Job counts per BullMQ state, as `longrun_queue_jobs` exports them. */
export const QUEUE_STATES = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
  'completed',
  'failed',
] as const;

export type QueueCounts = Record<(typeof QUEUE_STATES)[number], number>;

/** How a parked job was woken: promoted, or added again because it could not be. */
export type WakeOutcome = 'woken' | 'requeued';

/** States in which a job will run (and read the record) without being woken. */
const WILL_RUN = new Set(['waiting', 'prioritized', 'active', 'waiting-children']);

/**
 * The producer side of the BullMQ boundary: the BullMQ queues tasks' jobs go to. Knows nothing of
 * records or tenants' rights; the engine decides what is done and in which order.
 */
export class TaskQueue {
  /**
   * The shared `tasks` queue every type ran on before each had its own: jobs older versions
   * left there are still found, counted and drained.
   */
  readonly legacyQueue: Queue;
  private readonly byName = new Map<string, Queue>();
  /** The webhook deliveries queue (filled by workers), for dashboards. */
  readonly webhookQueue: Queue;
  readonly prefix: string;
  private readonly types: JobPlacements;
  private readonly connection: Redis;
  private readonly cancelChannel: string;
  private readyWait: Promise<void> | undefined;

  constructor(opts: TaskQueueOptions) {
    this.connection = opts.connection;
    this.prefix = opts.prefix;
    this.cancelChannel = taskKeys(opts.prefix, opts.channelPrefix).cancelChannel;
    this.types = opts.types ?? new Map();
    this.legacyQueue = this.queueNamed(QUEUE_NAME);
    this.webhookQueue = new Queue(WEBHOOK_QUEUE_NAME, {
      connection: opts.connection,
      prefix: opts.prefix,
    });
    this.webhookQueue.on('error', () => undefined);
  }

  /**
   * Every queue a known job type runs on (each version's), and the legacy shared one, by name:
   * new types' queues appear as they register.
   */
  get queues(): ReadonlyMap<string, Queue> {
    for (const type of this.types.values()) {
      this.queueNamed(queueNameFor(type));
      for (const version of type.versions ?? []) this.queueNamed(queueNameFor(version));
    }
    return this.byName;
  }

  /** The queue a job type's new jobs go to (a queue of its own for a type not known). */
  queueFor(type: string): Queue {
    return this.queueNamed(queueNameFor(this.types.get(type) ?? { name: type }));
  }

  /**
   * The queues a job of this type may be in, most likely first: where new ones go, where its
   * other versions put them, its own, and the legacy shared queue (jobs placed before the type
   * had a queue of its own).
   */
  queuesFor(type: string): Queue[] {
    const placement = this.types.get(type);
    const names = new Set([
      queueNameFor(placement ?? { name: type }),
      ...(placement?.versions ?? []).map((v) => queueNameFor(v)),
      queueNameFor({ name: type, queue: placement?.queue }),
      QUEUE_NAME,
    ]);
    return [...names].map((name) => this.queueNamed(name));
  }

  /** The task's job and the queue it is in, wherever the type's jobs may be; `undefined`: none. */
  async findJob(taskId: string, type: string): Promise<{ job: Job; queue: Queue } | undefined> {
    for (const queue of this.queuesFor(type)) {
      const job = await Job.fromId(queue, taskId);
      if (job) return { job, queue };
    }
    return undefined;
  }

  /** The BullMQ queue of that name, made on first use. */
  queueNamed(name: string): Queue {
    let queue = this.byName.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.prefix });
      // Errors surface on the calls that hit them; without a listener EventEmitter would throw.
      queue.on('error', () => undefined);
      this.byName.set(name, queue);
    }
    return queue;
  }

  /**
   * Adds the BullMQ job for a stored task. Adding an id that already exists is a no-op, so a
   * replay can call it again safely. The job carries the input, so that a first run needs no
   * read of the record.
   */
  async enqueue(
    record: JobRecord,
    definition: JobPlacement,
    opts: EnqueueOptions = {},
  ): Promise<void> {
    const queue = this.queueNamed(queueNameFor(definition));
    await queue.add(definition.name, jobData(record, opts), jobOptions(record, definition, opts));
  }

  /**
   * The add `enqueue` would send, built and not sent, for the create script to run once the
   * record is stored (see bullmq-adapter.ts); `undefined` when the job must be added by `enqueue`.
   * With `fairShare` the job is prioritized, its priority set by the create.
   */
  prepare(
    record: JobRecord,
    definition: JobPlacement,
    opts: EnqueueOptions & { fairShare?: boolean } = {},
  ): JobAdd | undefined {
    const queue = this.queueNamed(queueNameFor(definition));
    const options = jobOptions(
      record,
      definition,
      opts.fairShare ? { ...opts, priority: FAIR_PRIORITY_PLACEHOLDER } : opts,
    );
    const data = jobData(record, opts);
    // Written out by the create's Lua where it can be (decision 69), else BullMQ's own add.
    return (
      quickAdd(queue, definition.name, data, options) ??
      captureAdd(queue, definition.name, data, options)
    );
  }

  /** Removes a job that is not running (waiting, delayed, parked). `false` if it could not be. */
  async removeJob(taskId: string, type: string): Promise<boolean> {
    for (const queue of this.queuesFor(type)) {
      try {
        if ((await queue.remove(taskId)) === 1) return true;
      } catch {
        return false; // locked by a worker: the cancel broadcast reaches it instead
      }
    }
    return false;
  }

  /**
   * Wakes the parked job of an answered task so that it runs again (reading the record, with its
   * answers). A job that cannot be promoted is one that will run anyway (waiting, active), or
   * one that will never run (gone, or in no list after a partial write): that one is replaced.
   */
  async wake(record: JobRecord & { type: string }, definition: JobPlacement): Promise<WakeOutcome> {
    const found = await this.findJob(record.id, record.type);
    if (found) {
      const { job, queue } = found;
      try {
        await job.promote();
        return 'woken';
      } catch {
        if (WILL_RUN.has(await job.getState())) return 'woken';
        await job.remove().catch(() => this.connection.del(queueKeys(queue).job(record.id)));
      }
    }
    await this.enqueue(record, definition, { readRecord: true });
    return 'requeued';
  }

  /** Promotes a delayed job; `false` when there is none to promote. */
  async promote(taskId: string, type: string): Promise<boolean> {
    const found = await this.findJob(taskId, type);
    if (!found) return false;
    await found.job.promote();
    return true;
  }

  /** Tells every worker process to abort the handler running this task, wherever it is. */
  async broadcastCancel(taskId: string): Promise<void> {
    await this.connection.publish(this.cancelChannel, taskId);
  }

  /** Job counts per state, summed over every queue; O(1) per state and queue (LLEN / ZCARD). */
  async counts(): Promise<QueueCounts> {
    const total = Object.fromEntries(QUEUE_STATES.map((s) => [s, 0])) as QueueCounts;
    for (const counts of (await this.countsByQueue()).values()) {
      for (const state of QUEUE_STATES) total[state] += counts[state];
    }
    return total;
  }

  /** Job counts per state for each queue. */
  async countsByQueue(): Promise<Map<string, QueueCounts>> {
    const entries = await Promise.all(
      [...this.queues].map(async ([name, queue]) => {
        const counts = await queue.getJobCounts(...QUEUE_STATES);
        const row = Object.fromEntries(QUEUE_STATES.map((s) => [s, counts[s] ?? 0])) as QueueCounts;
        return [name, row] as const;
      }),
    );
    return new Map(entries);
  }

  /** The producer connection (for other per-request Redis work, e.g. rate limiting). */
  get redis(): Redis {
    return this.connection;
  }

  /** Whether the connection is ready now (commands go out at once). */
  get ready(): boolean {
    return this.connection.status === 'ready';
  }

  /**
   * Resolves once the connection is ready (at once when it is). Producers do not queue commands
   * while disconnected, so callers wait here, bounded by their own deadline, instead of failing
   * a request that arrives while the connection is still being made.
   */
  whenReady(): Promise<void> {
    if (this.connection.status === 'ready') return Promise.resolve();
    // One shared listener however many requests wait during an outage.
    this.readyWait ??= new Promise<void>((resolve) =>
      this.connection.once('ready', () => {
        this.readyWait = undefined;
        resolve();
      }),
    );
    return this.readyWait;
  }

  /**
   * Runs a request's Redis work within `deadlineMs`, Redis failures turned into store errors. On a
   * ready connection whose own per-command timeout is no longer than the deadline, that timeout
   * is the deadline and no timer is armed per call (one showed in the poll profile); otherwise
   * the wait for the connection counts against `deadlineMs` (see `guard`).
   */
  run<T>(operation: () => Promise<T>, deadlineMs: number): Promise<T> {
    const own = this.connection.options.commandTimeout;
    if (this.connection.status === 'ready' && own !== undefined && own <= deadlineMs) {
      return operation().catch((error: unknown) => {
        throw classifyRedisError(error);
      });
    }
    return guard(async () => {
      await this.whenReady();
      return operation();
    }, deadlineMs);
  }

  async ping(): Promise<void> {
    await this.connection.ping();
  }

  async close(): Promise<void> {
    await Promise.all([...this.byName.values(), this.webhookQueue].map((q) => q.close()));
  }
}
