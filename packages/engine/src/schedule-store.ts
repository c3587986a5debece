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

/** The hash field naming the schedule's Idempotency-Key claim, if it was created with one. */
const FIELD_IDEM = 'idem';

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
 * write in one step, so concurrent creates cannot pass the cap together; with an Idempotency-Key
 * (ARGV[4], '' for none) it is claimed in the same step, unless claimed already. Nothing is
 * written before the first SET or HSET (Redis refuses a script past maxmemory only at its first
 * write). Returns 'ok', 'full <count>' or 'dup <claim's value>'. KEYS: the tenant's index, the
 * schedule's hash, the claim (the hash again when none). ARGV: max, score, id, claim value,
 * claim ttl (ms), then the hash's fields and values.
 */
const ADD = `
if ARGV[4] ~= '' then
  local existing = redis.call('GET', KEYS[3])
  if existing then return 'dup ' .. existing end
end
local max = tonumber(ARGV[1])
local count = redis.call('ZCARD', KEYS[1])
if max > 0 and count >= max then return 'full ' .. count end
if ARGV[4] ~= '' then
  redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[5])
  redis.call('HSET', KEYS[2], '${FIELD_IDEM}', KEYS[3])
end
redis.call('HSET', KEYS[2], unpack(ARGV, 6))
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
return 'ok'
`;

/**
 * Whether the tenant has room for another schedule, read before a create does any work (the
 * `ADD` script checks again when it writes): 'dup <claim's value>' when the Idempotency-Key
 * (KEYS[2], ARGV[2] '1') was claimed, 'full <count>' at the cap (ARGV[1]; 0: none), else 'ok'.
 */
const ROOM = `
if ARGV[2] == '1' then
  local existing = redis.call('GET', KEYS[2])
  if existing then return 'dup ' .. existing end
end
local max = tonumber(ARGV[1])
local count = redis.call('ZCARD', KEYS[1])
if max > 0 and count >= max then return 'full ' .. count end
return 'ok'
`;

/**
 * Removes a schedule, its index entry and its Idempotency-Key's claim, in one step (a replay
 * never finds a claim whose schedule is gone). KEYS: the hash, the tenant's index. ARGV: the id.
 */
const REMOVE = `
local claim = redis.call('HGET', KEYS[1], '${FIELD_IDEM}')
if claim then redis.call('DEL', claim) end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
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

  /**
   * Whether `tenant` may add a schedule: `{ room: false, count }` at `max`, `{ claimed }` (the
   * claim's value) when `claimKey` was claimed before. Read only: `add` decides.
   */
  async room(
    tenant: string,
    max: number,
    claimKey?: string,
  ): Promise<{ room: true } | { room: false; count: number } | { claimed: string }> {
    const reply = (await this.redis.eval(
      ROOM,
      2,
      this.keys.schedules(tenant),
      claimKey ?? this.keys.schedules(tenant),
      String(max),
      claimKey ? '1' : '0',
    )) as string;
    if (reply.startsWith('full ')) return { room: false, count: Number(reply.slice(5)) };
    if (reply.startsWith('dup ')) return { claimed: reply.slice(4) };
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
      3,
      this.keys.schedules(record.tenant),
      this.keys.schedule(record.id),
      claim?.key ?? this.keys.schedule(record.id),
      String(max),
      String(record.createdAt),
      record.id,
      claim?.value ?? '',
      String(claim?.ttlMs ?? 0),
      ...fields,
    )) as string;
    if (reply === 'ok') return { added: true };
    if (reply.startsWith('dup ')) return { added: false, claimed: reply.slice(4) };
    if (reply.startsWith('full ')) return { added: false, count: Number(reply.slice(5)) };
    throw new Error(`unexpected reply to a schedule add: ${reply}`);
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
    await this.redis.eval(
      REMOVE,
      2,
      this.keys.schedule(record.id),
      this.keys.schedules(record.tenant),
      record.id,
    );
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
