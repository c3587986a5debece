import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  FIELD,
  repairFor,
  TERMINAL_STATUSES,
  type BullJobState,
  type Repair,
  type TaskStatus,
} from '@longrun/core';
import { taskKeys, type TaskKeys } from './keys.js';
import type { JobTypeDirectory } from './registry/job-type-directory.js';
import { drainLegacyTenants, dropIdleTenant } from './commands/index.js';
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

/** Tenant names read per step of the walk. */
const TENANT_PAGE = 100;

/** Where a sweep stopped: a tenant, and the last entry of its open set it took. */
interface WalkCursor {
  tenant: string;
  /** The entry's score (the task's expiry) and member (its id): the set's own order. */
  score: number;
  id: string;
}

/** An open-set entry to check. */
interface Entry {
  id: string;
  tenant: string;
}

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
    await this.drainLegacy(batch);
    const { entries, next } = await this.walk(
      parseCursor(await redis.get(this.keys.reconcilerCursor)),
      batch,
    );
    await redis.set(this.keys.reconcilerCursor, next ? JSON.stringify(next) : '');
    const due = await this.read(entries, now);
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

  /**
   * Up to `batch` open-set entries after `cursor`, tenant after tenant in name order (read a page
   * of names at a time, so a sweep never reads every tenant), and where the next sweep goes on
   * (none: the walk reached the end and starts over). A tenant whose open set is gone leaves the
   * tenants on the way.
   */
  private async walk(
    cursor: WalkCursor | undefined,
    batch: number,
  ): Promise<{ entries: Entry[]; next: WalkCursor | undefined }> {
    const entries: Entry[] = [];
    // From the cursor's own tenant, which may hold more entries after the cursor.
    let from = cursor ? `[${cursor.tenant}` : '-';
    for (;;) {
      const tenants = await this.opts.connection.zrangebylex(
        this.keys.openTenants,
        from,
        '+',
        'LIMIT',
        0,
        TENANT_PAGE,
      );
      for (const tenant of tenants) {
        const after = cursor?.tenant === tenant ? cursor : undefined;
        const page = await this.openPage(tenant, after, batch - entries.length);
        for (const id of page.ids) entries.push({ id, tenant });
        if (!page.more && !after && page.ids.length === 0) await this.dropIfIdle(tenant);
        if (entries.length >= batch) return { entries, next: page.last ?? after };
      }
      if (tenants.length < TENANT_PAGE) return { entries, next: undefined };
      from = `(${tenants[tenants.length - 1]}`;
    }
  }

  /**
   * Up to `n` ids of `tenant`'s open set after `after` (in the set's order: by expiry, then id),
   * the last one taken, and whether the set may hold more.
   */
  private async openPage(
    tenant: string,
    after: WalkCursor | undefined,
    n: number,
  ): Promise<{ ids: string[]; last: WalkCursor | undefined; more: boolean }> {
    const key = this.keys.openTasks(tenant);
    const ids: string[] = [];
    let last: WalkCursor | undefined;
    // From the cursor's score on; entries with that score up to its id were taken before.
    for (let offset = 0; ids.length < n;) {
      const want = n - ids.length;
      const flat = await this.opts.connection.zrangebyscore(
        key,
        after ? String(after.score) : '-inf',
        '+inf',
        'WITHSCORES',
        'LIMIT',
        offset,
        want,
      );
      offset += flat.length / 2;
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const id = flat[i] as string;
        const score = Number(flat[i + 1]);
        if (after && score === after.score && id <= after.id) continue;
        ids.push(id);
        last = { tenant, score, id };
      }
      if (flat.length / 2 < want) return { ids, last, more: false };
    }
    return { ids, last, more: true };
  }

  /** Takes `tenant` out of the set of tenants if its open set is gone (atomically: see the script). */
  private async dropIfIdle(tenant: string): Promise<void> {
    await dropIdleTenant.run(this.opts.connection, {
      keys: { tenants: this.keys.openTenants, open: this.keys.openTasks(tenant) },
      args: { tenant },
    });
  }

  /**
   * Moves what older versions left over to the walk: the plain set of tenants (its names join
   * the sorted one), and the set of every open task (`legacyAllOpen`: the tenants of the open
   * ones join, their open sets already hold them). Each leaves its old key a batch at a time;
   * the keys are gone once empty.
   */
  private async drainLegacy(batch: number): Promise<void> {
    const redis = this.opts.connection;
    await drainLegacyTenants.run(redis, {
      keys: { legacy: this.keys.legacyOpenTenants, tenants: this.keys.openTenants },
      args: { batch },
    });
    const ids = await redis.zrange(this.keys.legacyAllOpen, 0, batch - 1);
    if (ids.length === 0) return;
    const pipeline = redis.pipeline();
    for (const id of ids) pipeline.hmget(this.keys.task(id), FIELD.tenant, FIELD.status);
    const replies = (await pipeline.exec()) ?? [];
    const tenants = new Set<string>();
    for (const [, fields] of replies) {
      const [tenant, status] = (fields ?? []) as (string | null)[];
      if (tenant && status && !TERMINAL_STATUSES.includes(status as TaskStatus))
        tenants.add(tenant);
    }
    if (tenants.size > 0) {
      await redis.zadd(this.keys.openTenants, ...[...tenants].flatMap((t) => [0, t]));
    }
    await redis.zrem(this.keys.legacyAllOpen, ...ids);
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
      pipeline.exists(queue.toKey(task.id));
      pipeline.zscore(queue.keys.delayed ?? queue.toKey('delayed'), task.id);
    }
    const replies = ((await pipeline.exec()) ?? []) as [unknown, unknown][];
    for (let i = 0; i < queues.length; i++) {
      const exists = Number(replies[2 * i]?.[1] ?? 0);
      const score = (replies[2 * i + 1]?.[1] ?? null) as string | null;
      if (!exists) continue;
      if (score === null) return { jobState: 'waiting', parked: false };
      // BullMQ scores a delayed job by its due time × 0x1000 (plus a counter).
      const dueAt = Math.floor(Number(score) / 0x1000);
      return { jobState: 'delayed', parked: dueAt >= task.createdAt + task.ttlMs };
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

/** The saved cursor, or none (the start) when there is none or it is an older version's. */
function parseCursor(saved: string | null): WalkCursor | undefined {
  if (!saved) return undefined;
  try {
    const c = JSON.parse(saved) as Partial<WalkCursor>;
    if (typeof c.tenant === 'string' && typeof c.score === 'number' && typeof c.id === 'string') {
      return { tenant: c.tenant, score: c.score, id: c.id };
    }
  } catch {
    // an id, as the walk over the set of every open task saved it
  }
  return undefined;
}
