import type { Redis } from 'ioredis';
import type { TaskKeys } from './keys.js';

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

/** The hash fields of a schedule (`<prefix>:schedule:<id>`). */
const FIELD = {
  tenant: 'tenant',
  createdAt: 'created',
  spec: 'spec',
  lastRunAt: 'lastRun',
  lastTaskId: 'lastTask',
  lastError: 'lastError',
} as const;

/**
 * Adds a schedule unless its tenant has `max` (ARGV[1]; 0: no cap) already: the count and the
 * write in one step, so concurrent creates cannot pass the cap together. Returns -1 when added,
 * else the tenant's count. KEYS: the tenant's index, the schedule's hash. ARGV: max, score,
 * id, then the hash's fields and values.
 */
const ADD = `
local max = tonumber(ARGV[1])
local count = redis.call('ZCARD', KEYS[1])
if max > 0 and count >= max then return count end
redis.call('HSET', KEYS[2], unpack(ARGV, 4))
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
return -1
`;

/**
 * Notes what a tick did on a schedule that still exists (a tick racing a delete must not bring
 * the hash back). KEYS: the hash. ARGV: a field to clear ('' for none), then fields and values.
 */
const NOTE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] ~= '' then redis.call('HDEL', KEYS[1], ARGV[1]) end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
`;

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

  /** Stores a new schedule; `{ added: false, count }` when its tenant has `max` already. */
  async add(
    record: ScheduleRecord,
    max: number,
  ): Promise<{ added: true } | { added: false; count: number }> {
    const fields = [
      FIELD.tenant,
      record.tenant,
      FIELD.createdAt,
      String(record.createdAt),
      FIELD.spec,
      JSON.stringify(record.spec),
    ];
    const reply = (await this.redis.eval(
      ADD,
      2,
      this.keys.schedules(record.tenant),
      this.keys.schedule(record.id),
      String(max),
      String(record.createdAt),
      record.id,
      ...fields,
    )) as number;
    return reply === -1 ? { added: true } : { added: false, count: reply };
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

  /** Removes the schedule and its index entry. */
  async remove(record: Pick<ScheduleRecord, 'id' | 'tenant'>): Promise<void> {
    await Promise.all([
      this.redis.del(this.keys.schedule(record.id)),
      this.redis.zrem(this.keys.schedules(record.tenant), record.id),
    ]);
  }

  /** A tick made (or found, when redelivered) this task. No-op if the schedule is gone. */
  async noteRun(id: string, at: number, taskId: string): Promise<void> {
    await this.note(id, FIELD.lastError, [FIELD.lastRunAt, String(at), FIELD.lastTaskId, taskId]);
  }

  /** A tick made no task, for this reason. No-op if the schedule is gone. */
  async noteError(id: string, at: number, message: string): Promise<void> {
    await this.note(id, '', [FIELD.lastError, JSON.stringify({ message, at })]);
  }

  private async note(id: string, clear: string, fields: string[]): Promise<void> {
    await this.redis.eval(NOTE, 1, this.keys.schedule(id), clear, ...fields);
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
