import { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobTypeDefinition } from '@longrun/core';
import { QUEUE_NAME } from './keys.js';
import { TaskStore } from './task-store.js';

export interface TaskQueueOptions {
  /** A producer connection (see `createRedis`); shared by BullMQ and the task store. */
  connection: Redis;
  prefix: string;
  maxTtlMs: number;
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

/**
 * The producer side of the BullMQ boundary: task records plus the BullMQ queue their jobs go to.
 * Knows nothing of HTTP or tenants' rights; the API's service layer decides what is allowed.
 */
export class TaskQueue {
  readonly store: TaskStore;
  readonly queue: Queue;
  private readonly connection: Redis;
  private readyWait: Promise<void> | undefined;

  constructor(opts: TaskQueueOptions) {
    this.connection = opts.connection;
    this.store = new TaskStore(opts.connection, opts.prefix, opts.maxTtlMs);
    this.queue = new Queue(QUEUE_NAME, { connection: opts.connection, prefix: opts.prefix });
    // Errors surface on the calls that hit them; without a listener EventEmitter would throw.
    this.queue.on('error', () => undefined);
  }

  /**
   * Adds the BullMQ job for a stored task. Adding an id that already exists is a no-op, so a
   * replay can call it again safely. The job carries no input: the record holds it.
   */
  async enqueue(taskId: string, tenant: string, definition: JobTypeDefinition): Promise<void> {
    const attempts = definition.attempts ?? 1;
    await this.queue.add(
      definition.name,
      { tenant },
      {
        jobId: taskId,
        attempts,
        ...(attempts > 1
          ? { backoff: { type: 'exponential', delay: definition.backoffMs ?? 1000 } }
          : {}),
        // The task record keeps the outcome; finished BullMQ jobs would only double the memory.
        removeOnComplete: true,
        removeOnFail: true,
      },
    );
  }

  /** Removes a job that is not running (waiting, delayed, parked). `false` if it could not be. */
  async removeJob(taskId: string): Promise<boolean> {
    try {
      return (await this.queue.remove(taskId)) === 1;
    } catch {
      return false; // locked by a worker: the cancel broadcast reaches it instead
    }
  }

  /** Wakes a job parked for input. `false` when there is no parked job to wake. */
  async promote(taskId: string): Promise<boolean> {
    const job = await Job.fromId(this.queue, taskId);
    if (!job) return false;
    await job.promote();
    return true;
  }

  /** Tells every worker process to abort the handler running this task, wherever it is. */
  async broadcastCancel(taskId: string): Promise<void> {
    await this.connection.publish(this.store.keys.cancelChannel, taskId);
  }

  /** Job counts per state, O(1) each (LLEN / ZCARD). */
  async counts(): Promise<Record<(typeof QUEUE_STATES)[number], number>> {
    const counts = await this.queue.getJobCounts(...QUEUE_STATES);
    return Object.fromEntries(QUEUE_STATES.map((s) => [s, counts[s] ?? 0])) as Record<
      (typeof QUEUE_STATES)[number],
      number
    >;
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

  async ping(): Promise<void> {
    await this.connection.ping();
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
