import type { Redis } from 'ioredis';
import {
  CorruptRecordError,
  decodeHandle,
  decodeRecord,
  encodeRecord,
  FIELD,
  guardArg,
  HANDLE_FIELDS,
  LIFECYCLE,
  type A2APushTarget,
  type HandleFields,
  type LifecycleEventName,
  type RecordUpdate,
  type TaskRecord,
  type TaskStatus,
} from '@longrun/core';
import type { JobAdd } from './bullmq-adapter.js';
import { indexMember, indexPruneBound, taskKeys, type TaskKeys } from './keys.js';
import { defineTaskScripts, type TaskRedis } from './task-redis.js';

/** What an event may write besides the status its row names (never the status itself). */
export type EventFields = Omit<RecordUpdate, 'status' | 'id' | 'tenant' | 'createdAt'>;

export type TransitionOutcome =
  | { ok: true; previous: TaskStatus; eventId?: string }
  | { ok: false; reason: 'missing' }
  | { ok: false; reason: 'refused'; current: TaskStatus }
  /** The record changed since the caller read it (`transition`'s `ifSeq`). */
  | { ok: false; reason: 'changed'; current: TaskStatus };

/**
 * What a push config change did: `ok`; `missing` (no such task for the tenant); `callback` (the
 * task has a longrun webhook); `absent` (no config of that id to remove); or another config's id
 * is set (`taken`).
 */
export type PushChange = 'ok' | 'missing' | 'callback' | 'absent' | { taken: string };

/** One task to create: its record, its idempotency claim, the tenant's cap (0 = none). */
export interface CreateItem {
  record: TaskRecord;
  idempotency?: { key: string; value: string } | undefined;
  maxOpenTasks?: number;
  /** The tenant's storage budget in bytes (0 = none). */
  maxBytes?: number;
  /** Fair share: where the task's BullMQ priority comes from (none: no priority is made). */
  fair?: FairTag | undefined;
  /**
   * The task's BullMQ job, added by the create once the record is stored (`TaskQueue.prepare`);
   * under fair share with the priority the create gives. None: the caller adds the job.
   */
  job?: JobAdd | undefined;
}

/** The inputs of a task's fair-share priority (see `fair_priority` in the create script). */
export interface FairTag {
  /** The queue's hash of tenant -> last tag (`TaskKeys.fairShare`). */
  key: string;
  /** The queue's BullMQ prioritized set, whose head is the virtual time now. */
  head: string;
  /** How far one task moves its tenant's tag: 1 / the tenant's weight. */
  step: number;
  /** Added to the tag: the request's own `priority` minus one. */
  offset: number;
}

export type CreateOutcome =
  | { created: true; priority?: number }
  | { created: false; idempotencyValue: string }
  /** The record names a schedule that is gone (deleted before the tick's create ran). */
  | { created: false; gone: true }
  | { created: false; full: true; openTasks: number }
  | { created: false; over: true; usedBytes: number; retryAfterMs: number };

/**
 * longrun's task records in Redis: one hash per task (expiring with the task's ttl, its layout
 * owned by core's codec), one sorted set per tenant for listing, one key per idempotency key.
 * Every change is a lifecycle event (`transition`), guarded by the event's row. A poll is one
 * `HMGET` (`peek`).
 */
export class TaskStore {
  readonly keys: TaskKeys;
  private readonly redis: TaskRedis;

  constructor(
    redis: Redis,
    prefix: string,
    private readonly maxTtlMs: number,
    /** The configured prefix when `prefix` is a shard's (its channels are shared; see taskKeys). */
    channelPrefix = prefix,
  ) {
    this.keys = taskKeys(prefix, channelPrefix);
    this.redis = defineTaskScripts(redis);
  }

  /** Stores a new record, and claims its idempotency key in the same atomic step. */
  async create(
    record: TaskRecord,
    idempotency?: { key: string; value: string },
    maxOpenTasks = 0,
    maxBytes = 0,
    fairTag?: FairTag,
  ): Promise<CreateOutcome> {
    const now = Date.now();
    const item = this.createItem({ record, idempotency, maxOpenTasks, maxBytes, fair: fairTag });
    const [task, index, idem, open, usage, fair, head] = item.keys;
    const [expiresAt, member, idemValue, id, cap, fields] = item.args;
    const reply = await this.redis.longrunCreate(
      task,
      index,
      idem,
      open,
      usage,
      this.keys.openTenants,
      fair,
      head,
      expiresAt,
      member,
      this.pruneBound(now),
      idemValue,
      this.indexTtl,
      id,
      cap,
      String(now),
      fields,
    );
    return toCreateOutcome(reply);
  }

  /**
   * Creates several tasks in one round trip and one script, each as by {@link create} and in
   * order (a later one sees the idempotency keys and open tasks of the earlier ones).
   */
  async createMany(items: readonly CreateItem[]): Promise<CreateOutcome[]> {
    const now = Date.now();
    const keys: string[] = [this.keys.openTenants];
    const args: (string | Buffer)[] = [
      String(now),
      this.pruneBound(now),
      this.indexTtl,
      String(items.length),
    ];
    // The jobs' key groups: one per add script and queue, numbered from 1 in the order met.
    const groups = new Map<string, number>();
    const groupKeys: string[] = [];
    for (const item of items) {
      const made = this.createItem(item);
      keys.push(...made.keys);
      args.push(...made.args);
      const job = item.job;
      if (!job) {
        args.push('', '', '', '');
        continue;
      }
      const id = `${job.tag} ${job.keys[0]}`;
      let group = groups.get(id);
      if (group === undefined) {
        groups.set(id, (group = groups.size + 1));
        groupKeys.push(...job.keys);
      }
      args.push(`${job.tag}${group}`, ...job.args);
    }
    keys.push(...groupKeys);
    const replies = await this.redis.longrunCreateMany(keys.length, ...keys, ...args);
    return replies.map(toCreateOutcome);
  }

  /** A create's own keys (task, index, idempotency, open set, …) and arguments. */
  private createItem({ record, idempotency, maxOpenTasks = 0, maxBytes = 0, fair }: CreateItem): {
    keys: [string, string, string, string, string, string, string];
    args: [string, string, string, string, string, string];
  } {
    const taskKey = this.keys.task(record.id);
    const member = indexMember(record.createdAt, record.id);
    const fields = createFields(record);
    if (idempotency) fields.push(FIELD.idempotencyKey, idempotency.key);
    fields.push(FIELD.seq, '1');
    return {
      keys: [
        taskKey,
        this.keys.index(record.tenant),
        idempotency?.key ?? taskKey,
        this.keys.openTasks(record.tenant),
        this.keys.usage(record.tenant),
        fair?.key ?? taskKey,
        fair?.head ?? taskKey,
      ],
      args: [
        String(record.createdAt + record.ttlMs),
        member,
        idempotency?.value ?? '',
        record.id,
        // The limits and the fair share in one argument (0 = none).
        `${maxOpenTasks} ${maxBytes} ${fair?.step ?? 0} ${fair?.offset ?? 0}`,
        // The record's fields travel as one JSON array (decision 21).
        JSON.stringify(fields),
      ],
    };
  }

  /** Index entries older than the longest ttl are pruned as new ones are added. */
  private pruneBound(now: number): string {
    return indexPruneBound(now - this.maxTtlMs);
  }

  /** How long a tenant's index and open set outlive their newest task. */
  private get indexTtl(): string {
    return String(this.maxTtlMs + 60_000);
  }

  /** Who owns the task and whether it has a callback (one small `HMGET`), or `null` once gone. */
  async owner(id: string): Promise<{ tenant: string; hasCallback: boolean } | null> {
    const [tenant, callback] = await this.redis.hmget(
      this.keys.task(id),
      FIELD.tenant,
      FIELD.callback,
    );
    return tenant ? { tenant, hasCallback: Boolean(callback) } : null;
  }

  /**
   * Who owns the task and where its status changes are POSTed (one small `HMGET`), or `null`
   * once gone.
   */
  async callback(
    id: string,
  ): Promise<{ tenant: string; callback: TaskRecord['callback'] | undefined } | null> {
    const [tenant, callback] = await this.redis.hmget(
      this.keys.task(id),
      FIELD.tenant,
      FIELD.callback,
    );
    if (!tenant) return null;
    if (!callback) return { tenant, callback: undefined };
    try {
      return { tenant, callback: JSON.parse(callback) as TaskRecord['callback'] };
    } catch {
      throw new CorruptRecordError(`task ${id}: field ${FIELD.callback} is not JSON`);
    }
  }

  /**
   * Sets (`target`) or removes (`{ remove: configId }`) the A2A push notification config of
   * `tenant`'s task `id`, atomically: see `SET_PUSH` for what it refuses.
   */
  async setPush(
    tenant: string,
    id: string,
    change: { set: A2APushTarget } | { remove: string },
  ): Promise<PushChange> {
    const [outcome, current] = await this.redis.longrunSetPush(
      this.keys.task(id),
      this.keys.usage(tenant),
      tenant,
      id,
      'set' in change ? 'set' : 'del',
      'set' in change ? change.set.id : change.remove,
      'set' in change ? JSON.stringify(change.set) : '',
    );
    switch (outcome) {
      case 'ok':
      case 'missing':
      case 'callback':
      case 'absent':
        return outcome;
      case 'taken':
        return { taken: current ?? '' };
      default:
        throw new Error(`unexpected reply to a push config change: ${outcome}`);
    }
  }

  /**
   * The tenant's open tasks (not yet expired) and stored bytes on this shard, in one script that
   * first gives back the bytes of its tasks that expired (as a create on this shard would).
   */
  async tenantUsage(tenant: string, now = Date.now()): Promise<{ open: number; bytes: number }> {
    const reply = (await this.redis.eval(
      TENANT_USAGE,
      2,
      this.keys.openTasks(tenant),
      this.keys.usage(tenant),
      String(now),
    )) as [number, string | number];
    return { open: Number(reply[0]), bytes: Number(reply[1]) };
  }

  /** Bytes each tenant's stored tasks take, as counted for its storage budget (one round trip). */
  async storedBytes(tenants: readonly string[]): Promise<Map<string, number>> {
    const pipeline = this.redis.pipeline();
    for (const tenant of tenants) pipeline.hget(this.keys.usage(tenant), '#total');
    const replies = (await pipeline.exec()) ?? [];
    return new Map(tenants.map((t, i) => [t, Number(replies[i]?.[1] ?? 0)]));
  }

  /** The record, or `null` once it is gone (never created, expired or forgotten). */
  async get(id: string): Promise<TaskRecord | null> {
    return decodeRecord(id, await this.redis.hgetall(this.keys.task(id)));
  }

  /**
   * What a handle shows of a record (one `HMGET`), or `null` once it is gone: a poll's read, which
   * neither moves nor parses the input and answers, whatever their size.
   */
  async peek(id: string): Promise<HandleFields | null> {
    return decodeHandle(id, await this.redis.hmget(this.keys.task(id), ...HANDLE_FIELDS));
  }

  /**
   * What {@link peek} reads, with the record's event number (`seq`) in the same read: pass it to
   * `transition` as `ifSeq` to act only on the record as it was read.
   */
  async peekAt(id: string): Promise<{ view: HandleFields; seq: string } | null> {
    const values = await this.redis.hmget(this.keys.task(id), ...HANDLE_FIELDS, FIELD.seq);
    const view = decodeHandle(id, values.slice(0, HANDLE_FIELDS.length));
    return view ? { view, seq: values[HANDLE_FIELDS.length] ?? '' } : null;
  }

  /** The BullMQ priority the task was submitted with, if any. */
  async priority(id: string): Promise<number | undefined> {
    const value = await this.redis.hget(this.keys.task(id), FIELD.priority);
    return value ? Number(value) : undefined;
  }

  /**
   * Applies lifecycle `event` (its row's status and message, then `fields`) unless the task is
   * gone or the row's guard refuses its status. `appendInput` adds an answer to the record's
   * inputs in the same step. `ifSeq` (from {@link peekAt}): only if no change was recorded since
   * that read (`changed` otherwise), so what the caller checked is still what it acts on.
   * @example await store.transition(id, 'progress', { progress: 50 })
   */
  async transition(
    id: string,
    event: LifecycleEventName,
    fields: EventFields = {},
    opts: { appendInput?: unknown; ifSeq?: string } = {},
  ): Promise<TransitionOutcome> {
    const encoded = encodeRecord({ ...eventUpdate(event), ...fields, updatedAt: Date.now() });
    const append = 'appendInput' in opts ? (JSON.stringify(opts.appendInput) ?? 'null') : '';
    const reply = await this.redis.longrunTransition(
      this.keys.task(id),
      this.keys.events(id),
      this.keys.outbox,
      guardArg(event),
      append,
      this.keys.eventsChannel,
      id,
      this.keys.tenantPrefix,
      // '' checks nothing: no `ifSeq`, or a record an older version made without `seq`.
      opts.ifSeq ?? '',
      ...encoded,
    );
    return toOutcome(reply);
  }

  /**
   * The `complete` event for several tasks in one round trip and one script: each gets its own
   * result, guarded as by {@link transition}, whose outcome it returns.
   */
  async completeMany(
    items: readonly { id: string; result: unknown }[],
  ): Promise<TransitionOutcome[]> {
    const { to, statusMessage } = LIFECYCLE.complete;
    const keys: string[] = [this.keys.outbox];
    const args: string[] = [
      this.keys.eventsChannel,
      this.keys.tenantPrefix,
      to,
      statusMessage,
      String(Date.now()),
    ];
    for (const { id, result } of items) {
      keys.push(this.keys.task(id), this.keys.events(id));
      args.push(id, JSON.stringify(result) ?? 'null');
    }
    const replies = await this.redis.longrunCompleteMany(keys.length, ...keys, ...args);
    return replies.split(',').map((reply) => toOutcome(reply.split(' ')));
  }

  /**
   * The `start` event for a task a worker took (unless its guard refuses), returning the record
   * as it now is, in one round trip; `null` when there is nothing to run.
   */
  async start(id: string, fields: EventFields = {}): Promise<TaskRecord | null> {
    const encoded = encodeRecord({ ...eventUpdate('start'), ...fields, updatedAt: Date.now() });
    const [outcome, flat] = await this.redis.longrunStart(
      this.keys.task(id),
      this.keys.events(id),
      this.keys.outbox,
      this.keys.eventsChannel,
      id,
      ...encoded,
    );
    if (outcome !== 'ok' || !Array.isArray(flat)) return null;
    const hash: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i] as string] = flat[i + 1] as string;
    return decodeRecord(id, hash);
  }

  /** Deletes a terminal task, its index entry and its idempotency key. */
  async forget(
    record: Pick<TaskRecord, 'id' | 'tenant' | 'createdAt'>,
  ): Promise<TransitionOutcome> {
    const key = this.keys.task(record.id);
    const idem = await this.redis.hget(key, FIELD.idempotencyKey);
    const reply = await this.redis.longrunForget(
      key,
      this.keys.index(record.tenant),
      idem || key,
      this.keys.events(record.id),
      this.keys.usage(record.tenant),
      indexMember(record.createdAt, record.id),
      idem ? '1' : '0',
      record.id,
    );
    return toOutcome(reply);
  }

  /**
   * Takes back a record whose job was never added (or whose create timed out and may still land),
   * with its index entry, and its idempotency key while that still names this task; unless
   * another request may hold the task (a replay of its key handed it out) or it ran (a change was
   * recorded): then it is `kept`, whole. `absent`: there was no record to take back.
   */
  async discard(
    record: TaskRecord,
    idempotency?: { key: string; value: string },
  ): Promise<'kept' | 'discarded' | 'absent'> {
    return this.redis.longrunDiscard(
      this.keys.task(record.id),
      this.keys.index(record.tenant),
      idempotency?.key ?? this.keys.task(record.id),
      this.keys.events(record.id),
      this.keys.openTasks(record.tenant),
      this.keys.usage(record.tenant),
      indexMember(record.createdAt, record.id),
      idempotency?.value ?? '',
      record.id,
    );
  }
}

/**
 * A new record's fields, flat, less those that hold what an absent field reads as (core's
 * `decodeRecord`, and the scripts): the id (it is in the key), no cancel asked, not awaiting
 * input, no answers. Fewer fields to send, decode and store for every task.
 */
function createFields(record: TaskRecord): string[] {
  const all = encodeRecord(record);
  const fields: string[] = [];
  for (let i = 0; i + 1 < all.length; i += 2) {
    const [name, value] = [all[i] as string, all[i + 1] as string];
    if (name === FIELD.id || DEFAULTS[name] === value) continue;
    fields.push(name, value);
  }
  return fields;
}

const DEFAULTS: Record<string, string> = {
  [FIELD.cancelRequested]: '0',
  [FIELD.awaitingInput]: '0',
  [FIELD.inputs]: '[]',
};

/** The status and message an event's row writes. */
function eventUpdate(event: LifecycleEventName): RecordUpdate {
  const row = LIFECYCLE[event];
  const update: RecordUpdate = {};
  if (row.to !== null) update.status = row.to;
  if ('statusMessage' in row) update.statusMessage = row.statusMessage;
  return update;
}

function toCreateOutcome(reply: string): CreateOutcome {
  if (reply === 'ok') return { created: true };
  if (reply.startsWith('ok ')) return { created: true, priority: Number(reply.slice(3)) };
  if (reply.startsWith('dup ')) return { created: false, idempotencyValue: reply.slice(4) };
  if (reply === 'gone') return { created: false, gone: true };
  if (reply.startsWith('full '))
    return { created: false, full: true, openTasks: Number(reply.slice(5)) };
  if (reply.startsWith('over ')) {
    const [, used, wait] = reply.split(' ');
    return { created: false, over: true, usedBytes: Number(used), retryAfterMs: Number(wait) };
  }
  throw new Error(`unexpected reply to a create: ${reply}`);
}

function toOutcome(reply: string[]): TransitionOutcome {
  if (reply[0] === 'ok') {
    return { ok: true, previous: reply[1] as TaskStatus, eventId: reply[2] ?? '' };
  }
  if (reply[0] === 'missing') return { ok: false, reason: 'missing' };
  if (reply[0] === 'changed')
    return { ok: false, reason: 'changed', current: reply[1] as TaskStatus };
  return { ok: false, reason: 'refused', current: reply[1] as TaskStatus };
}

/** See `TaskStore.tenantUsage`: the expired tasks' bytes released, then the open count and bytes. */
const TENANT_USAGE = `
local now = tonumber(ARGV[1])
local expiring = KEYS[2] .. '-exp'
for _, id in ipairs(redis.call('ZRANGEBYSCORE', expiring, '-inf', now, 'LIMIT', 0, 100)) do
  local bytes = redis.call('HGET', KEYS[2], id)
  if bytes then
    redis.call('HINCRBY', KEYS[2], '#total', -tonumber(bytes))
    redis.call('HDEL', KEYS[2], id)
  end
  redis.call('ZREM', expiring, id)
end
local open = redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
return { open, redis.call('HGET', KEYS[2], '#total') or 0 }`;
