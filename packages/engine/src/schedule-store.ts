import type { Redis } from 'ioredis';
import type { TaskKeys } from './keys.js';
import { addSchedule } from './commands/add-schedule.js';
import { noteScheduleError } from './commands/note-schedule-error.js';
import { noteScheduleRun } from './commands/note-schedule-run.js';
import { removeSchedule } from './commands/remove-schedule.js';
import { scheduleRoom } from './commands/schedule-room.js';
import { SCHEDULE_FIELD } from './schedule-fields.js';

/** What each run of a schedule submits, and when runs are due: the create body, normalised. */
export interface ScheduleSpec {
  type: string;
  input: Record<string, unknown>;
  /** A cron pattern, read in `tz`; or `everyMs`. */
  cron?: string;
  tz?: string;
  everyMs?: number;
  ttlMs?: number;
  timeoutMs?: number;
}

/** An Idempotency-Key's claim on a schedule create: its key, `<id> <body hash>`, how long. */
export interface ScheduleClaim {
  key: string;
  value: string;
  ttlMs: number;
}

/** A stored schedule: its owner, its spec, and what its last tick did. */
export interface ScheduleRecord {
  id: string;
  tenant: string;
  createdAt: number;
  spec: ScheduleSpec;
  lastRunAt?: number;
  lastTaskId?: string;
  /** Why the last tick made no task. */
  lastError?: { message: string; at: number };
}

/** The hash fields of a schedule (`<prefix>:schedule:<id>`), named once with its scripts. */
const FIELD = SCHEDULE_FIELD;

/**
 * The schedules' Redis side: a hash per schedule and, per tenant, a sorted set of its schedule
 * ids by creation time. No TTL: a schedule lives until it is deleted. When its runs are due is
 * BullMQ's to know (its job scheduler of the same id), not this store's.
 */
export class ScheduleStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: TaskKeys,
  ) {}

  /**
   * Whether `tenant` may add a schedule: `{ room: false, count }` at `max`, `{ claimed }` (the
   * claim's value) when `claimKey` was claimed before. Read only: `add` decides.
   */
  async room(
    tenant: string,
    max: number,
    claimKey?: string,
  ): Promise<{ room: true } | { room: false; count: number } | { claimed: string }> {
    const index = this.keys.schedules(tenant);
    const reply = await scheduleRoom.run(this.redis, {
      keys: { index, claim: claimKey ?? index },
      args: { max, checkClaim: claimKey ? '1' : '0' },
    });
    if (reply.kind === 'full') return { room: false, count: reply.count };
    if (reply.kind === 'dup') return { claimed: reply.claimed };
    return { room: true };
  }

  /**
   * Stores a new schedule: `{ added: false, count }` when its tenant has `max` already,
   * `{ added: false, claimed }` (the claim's value) when `claim.key` was claimed before.
   */
  async add(
    record: ScheduleRecord,
    max: number,
    claim?: ScheduleClaim,
  ): Promise<
    { added: true } | { added: false; count: number } | { added: false; claimed: string }
  > {
    const schedule = this.keys.schedule(record.id);
    const reply = await addSchedule.run(this.redis, {
      keys: { index: this.keys.schedules(record.tenant), schedule, claim: claim?.key ?? schedule },
      args: {
        max,
        id: record.id,
        tenant: record.tenant,
        created: record.createdAt,
        spec: JSON.stringify(record.spec),
        claimValue: claim?.value ?? '',
        claimTtl: claim?.ttlMs ?? 0,
      },
    });
    if (reply.kind === 'ok') return { added: true };
    if (reply.kind === 'dup') return { added: false, claimed: reply.claimed };
    return { added: false, count: reply.count };
  }

  /** The schedule, or `null` when there is none of this id. */
  async get(id: string): Promise<ScheduleRecord | null> {
    return decode(id, await this.redis.hgetall(this.keys.schedule(id)));
  }

  /** The tenant's schedules, newest first; ids whose hash is gone are dropped from its index. */
  async list(tenant: string): Promise<ScheduleRecord[]> {
    const ids = await this.redis.zrevrange(this.keys.schedules(tenant), 0, -1);
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.schedule(id));
    const replies = (await pipeline.exec()) ?? [];
    const found: ScheduleRecord[] = [];
    const gone: string[] = [];
    for (const [i, id] of ids.entries()) {
      const [error, hash] = replies[i] ?? [null, {}];
      if (error) throw error;
      const record = decode(id, hash as Record<string, string>);
      if (record && record.tenant === tenant) found.push(record);
      else gone.push(id);
    }
    if (gone.length > 0) await this.redis.zrem(this.keys.schedules(tenant), ...gone);
    return found;
  }

  /** Removes the schedule, its index entry and its Idempotency-Key's claim. */
  async remove(record: Pick<ScheduleRecord, 'id' | 'tenant'>): Promise<void> {
    await removeSchedule.run(this.redis, {
      keys: { schedule: this.keys.schedule(record.id), index: this.keys.schedules(record.tenant) },
      args: { id: record.id },
    });
  }

  /** A tick made (or found, when redelivered) this task. No-op if the schedule is gone. */
  async noteRun(id: string, at: number, taskId: string): Promise<void> {
    await noteScheduleRun.run(this.redis, {
      keys: { schedule: this.keys.schedule(id) },
      args: { at, task: taskId },
    });
  }

  /** A tick made no task, for this reason. No-op if the schedule is gone. */
  async noteError(id: string, at: number, message: string): Promise<void> {
    await noteScheduleError.run(this.redis, {
      keys: { schedule: this.keys.schedule(id) },
      args: { error: JSON.stringify({ message, at }) },
    });
  }
}

/** A schedule from its hash; `null` when the hash is empty (none) or not a schedule's. */
function decode(id: string, hash: Record<string, string>): ScheduleRecord | null {
  const tenant = hash[FIELD.tenant];
  const spec = hash[FIELD.spec];
  if (!tenant || !spec) return null;
  const record: ScheduleRecord = {
    id,
    tenant,
    createdAt: Number(hash[FIELD.createdAt]),
    spec: JSON.parse(spec) as ScheduleSpec,
  };
  const lastRun = hash[FIELD.lastRunAt];
  if (lastRun) record.lastRunAt = Number(lastRun);
  const lastTask = hash[FIELD.lastTaskId];
  if (lastTask) record.lastTaskId = lastTask;
  const lastError = hash[FIELD.lastError];
  if (lastError) record.lastError = JSON.parse(lastError) as ScheduleRecord['lastError'];
  return record;
}
