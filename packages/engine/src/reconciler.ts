import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { FIELD, repairFor, type BullJobState, type Repair, type TaskStatus } from '@longrun/core';
import { delayedDueAt, queueKeys } from './bullmq-adapter.js';
import { taskKeys, type TaskKeys } from './keys.js';
import { OpenTaskWalk, type Entry } from './reconciler-walk.js';
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
 * process died between two writes. It walks every open task (the open sets of the tenants the
 * create script names, which terminal events empty), a batch per sweep, and repairs what
 * `repairFor` (core's lifecycle)
 * says: a job that never arrived is added again, a job parked without its `input_required` is
 * woken, a job BullMQ lost or failed on its own fails its task with a clear message. Every
 * repair is a guarded lifecycle event, so a task that moved on meanwhile is left as it is.
 */
export class Reconciler {
  private readonly keys: TaskKeys;
  private readonly store: TaskStore;
  private readonly jobs: TaskQueue;
  private readonly walk: OpenTaskWalk;
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
    this.walk = new OpenTaskWalk(opts.connection, this.keys);
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
   * saved cursor, tenant by tenant (from the start once it reaches the end). Returns the repairs
   * made.
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
    const batch = this.opts.batch ?? 500;
    await this.walk.drainLegacy(batch);
    const due = await this.read(await this.walk.next(batch), now);
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

  /** The open tasks among `entries` that have been still for longer than the grace time. */
  private async read(entries: Entry[], now: number): Promise<Checked[]> {
    if (entries.length === 0) return [];
    const pipeline = this.opts.connection.pipeline();
    for (const { id } of entries) pipeline.hmget(this.keys.task(id), ...CHECK_FIELDS);
    const replies = (await pipeline.exec()) ?? [];
    const gone = this.opts.connection.pipeline();
    const due: Checked[] = [];
    const graceMs = this.opts.graceMs ?? 30_000;
    for (const [i, { id, tenant: openOf }] of entries.entries()) {
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
        gone.zrem(this.keys.openTasks(openOf), id);
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
    if (gone.length > 0) await gone.exec();
    return due;
  }

  /**
   * The task's job as BullMQ keeps it: there or not, and delayed until when. It is looked for in
   * every queue the type's jobs may be in (its own, its other versions', the legacy shared one),
   * so a job an older version placed is not taken for lost and added a second time.
   */
  private async jobFacts(task: Checked): Promise<{ jobState: BullJobState; parked: boolean }> {
    const queues = this.jobs.queuesFor(task.type);
    const pipeline = this.opts.connection.pipeline();
    for (const queue of queues) {
      const keys = queueKeys(queue);
      pipeline.exists(keys.job(task.id));
      pipeline.zscore(keys.delayed, task.id);
    }
    const replies = ((await pipeline.exec()) ?? []) as [unknown, unknown][];
    for (let i = 0; i < queues.length; i++) {
      const exists = Number(replies[2 * i]?.[1] ?? 0);
      const score = (replies[2 * i + 1]?.[1] ?? null) as string | null;
      if (!exists) continue;
      if (score === null) return { jobState: 'waiting', parked: false };
      return { jobState: 'delayed', parked: delayedDueAt(score) >= task.createdAt + task.ttlMs };
    }
    return { jobState: 'unknown', parked: false };
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
