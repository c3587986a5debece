import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { FIELD, repairFor, type BullJobState, type Repair, type TaskStatus } from '@longrun/core';
import { taskKeys, type TaskKeys } from './keys.js';
import type { JobTypeDirectory } from './registry/job-type-directory.js';
import { TaskQueue } from './task-queue.js';
import { TaskStore } from './task-store.js';
import type { TaskWorkerLogger } from './worker/job-data.js';

export interface ReconcilerOptions {
  /** A worker-role connection. */
  connection: Redis;
  prefix: string;
  /** The configured prefix when `prefix` is a shard's (its channels are shared; see `taskKeys`). */
  channelPrefix?: string | undefined;
  /** Every registered job type (not only this worker's): their queues and attempts. */
  types: JobTypeDirectory;
  maxTtlMs: number;
  /** How often a sweep runs (one process at a time sweeps; default 10 s). */
  intervalMs?: number | undefined;
  /** A task changed within this long is left alone: its writer may still be at work (30 s). */
  graceMs?: number | undefined;
  /** Open tasks checked per sweep (default 500). */
  batch?: number | undefined;
  logger: TaskWorkerLogger;
  onRepair?: ((repair: Exclude<Repair, 'none'>) => void) | undefined;
}

/** The record fields a check reads, in this order. */
const CHECK_FIELDS = [
  FIELD.status,
  FIELD.type,
  FIELD.tenant,
  FIELD.createdAt,
  FIELD.updatedAt,
  FIELD.ttlMs,
  FIELD.started,
  FIELD.inputs,
  FIELD.repairs,
  FIELD.priority,
  FIELD.runAt,
] as const;

interface Checked {
  id: string;
  status: TaskStatus;
  type: string;
  tenant: string;
  createdAt: number;
  ttlMs: number;
  started: boolean;
  answers: number;
  repairs: number;
  priority: number | undefined;
  runAt: number | undefined;
}

/**
 * Maps BullMQ's view back onto the records, so the five statuses follow the queue even when a
 * process died between two writes. It walks every open task (a set the create script fills and
 * terminal events empty), a batch per sweep, and repairs what `repairFor` (core's lifecycle)
 * says: a job that never arrived is added again, a job parked without its `input_required` is
 * woken, a job BullMQ lost or failed on its own fails its task with a clear message. Every
 * repair is a guarded lifecycle event, so a task that moved on meanwhile is left as it is.
 */
export class Reconciler {
  private readonly keys: TaskKeys;
  private readonly store: TaskStore;
  private readonly jobs: TaskQueue;
  private readonly token = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;

  constructor(private readonly opts: ReconcilerOptions) {
    this.keys = taskKeys(opts.prefix, opts.channelPrefix);
    this.store = new TaskStore(opts.connection, opts.prefix, opts.maxTtlMs, opts.channelPrefix);
    this.jobs = new TaskQueue({
      connection: opts.connection,
      prefix: opts.prefix,
      channelPrefix: opts.channelPrefix,
      types: opts.types,
    });
  }

  private get intervalMs(): number {
    return this.opts.intervalMs ?? 10_000;
  }

  /** Sweeps every `intervalMs` until `stop`. */
  start(): void {
    const tick = () => {
      this.sweeping = this.sweep()
        .catch((err: unknown) => this.opts.logger.warn({ err }, 'reconciler sweep failed'))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, this.intervalMs);
        });
    };
    this.timer = setTimeout(tick, this.intervalMs);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.sweeping;
    await this.jobs.close();
  }

  /**
   * One sweep, if no other process holds the sweep lock: the next batch of open tasks after the
   * saved cursor (from the start once it reaches the end). Returns the repairs made.
   */
  async sweep(now = Date.now()): Promise<Record<Exclude<Repair, 'none'>, number>> {
    const made = { requeue: 0, promote: 0, jobLost: 0 };
    const redis = this.opts.connection;
    const locked = await redis.set(
      this.keys.reconcilerLock,
      this.token,
      'PX',
      this.intervalMs,
      'NX',
    );
    if (locked !== 'OK') return made;
    await this.opts.types.refresh();
    const cursor = (await redis.get(this.keys.reconcilerCursor)) ?? '';
    const batch = this.opts.batch ?? 500;
    const ids = await redis.zrangebylex(
      this.keys.allOpen,
      cursor === '' ? '-' : `(${cursor}`,
      '+',
      'LIMIT',
      0,
      batch,
    );
    await redis.set(this.keys.reconcilerCursor, ids.length < batch ? '' : (ids.at(-1) ?? ''));
    const due = await this.read(ids, now);
    for (const task of due) {
      const repair = repairFor({ ...task, ...(await this.jobFacts(task)) });
      if (repair === 'none' || !(await this.repair(task, repair))) continue;
      made[repair] += 1;
      this.opts.onRepair?.(repair);
      this.opts.logger.warn(
        { taskId: task.id, type: task.type, repair },
        'reconciler repaired a task',
      );
    }
    return made;
  }

  /** The open tasks among `ids` that have been still for longer than the grace time. */
  private async read(ids: string[], now: number): Promise<Checked[]> {
    if (ids.length === 0) return [];
    const pipeline = this.opts.connection.pipeline();
    for (const id of ids) pipeline.hmget(this.keys.task(id), ...CHECK_FIELDS);
    const replies = (await pipeline.exec()) ?? [];
    const gone: string[] = [];
    const due: Checked[] = [];
    const graceMs = this.opts.graceMs ?? 30_000;
    for (const [i, id] of ids.entries()) {
      const [
        status,
        type,
        tenant,
        created,
        updated,
        ttl,
        started,
        inputs,
        repairs,
        priority,
        runAt,
      ] = (replies[i]?.[1] ?? []) as (string | null)[];
      // Expired, forgotten, or finished without leaving the set: nothing more to watch.
      if (!status || status === 'completed' || status === 'failed' || status === 'cancelled') {
        gone.push(id);
        continue;
      }
      if (Number(updated) > now - graceMs) continue;
      due.push({
        id,
        status: status as TaskStatus,
        type: type ?? '',
        tenant: tenant ?? '',
        createdAt: Number(created),
        ttlMs: Number(ttl),
        started: started === '1',
        answers: inputs && inputs !== '[]' ? (JSON.parse(inputs) as unknown[]).length : 0,
        repairs: Number(repairs ?? 0),
        priority: priority ? Number(priority) : undefined,
        runAt: runAt ? Number(runAt) : undefined,
      });
    }
    if (gone.length > 0) await this.opts.connection.zrem(this.keys.allOpen, ...gone);
    return due;
  }

  /** The task's job as BullMQ keeps it: there or not, and delayed until when. */
  private async jobFacts(task: Checked): Promise<{ jobState: BullJobState; parked: boolean }> {
    const queue = this.jobs.queueFor(task.type);
    const [[, exists], [, score]] = ((await this.opts.connection
      .pipeline()
      .exists(queue.toKey(task.id))
      .zscore(queue.keys.delayed ?? queue.toKey('delayed'), task.id)
      .exec()) ?? [
      [null, 0],
      [null, null],
    ]) as [[unknown, number], [unknown, string | null]];
    if (!exists) return { jobState: 'unknown', parked: false };
    if (score === null) return { jobState: 'waiting', parked: false };
    // BullMQ scores a delayed job by its due time × 0x1000 (plus a counter).
    const dueAt = Math.floor(Number(score) / 0x1000);
    return { jobState: 'delayed', parked: dueAt >= task.createdAt + task.ttlMs };
  }

  /** Applies one repair; `false` when the task moved on meanwhile (the guard refused). */
  private async repair(task: Checked, repair: Exclude<Repair, 'none'>): Promise<boolean> {
    const definition = this.opts.types.get(task.type);
    if (repair === 'promote') return this.jobs.promote(task.id, task.type).catch(() => false);
    if (repair === 'requeue' && definition) {
      const done = await this.store.transition(task.id, 'requeue', { repairs: task.repairs + 1 });
      if (!done.ok) return false;
      await this.jobs.enqueue(task, definition, { readRecord: true });
      return true;
    }
    const message = definition
      ? 'The task was lost: its job was failed or removed outside longrun (stalled too often, or removed from the queue)'
      : `No worker has registered job type "${task.type}"`;
    const done = await this.store.transition(task.id, 'jobLost', {
      error: { message, code: 'job-lost' },
    });
    return done.ok;
  }
}
