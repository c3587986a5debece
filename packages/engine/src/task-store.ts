import type { Redis } from 'ioredis';
import type {
  Callback,
  HandleFields,
  InputRequest,
  TaskError,
  TaskEvent,
  TaskRecord,
  TaskStatus,
} from '@longrun/core';
import { isTerminal } from '@longrun/core';
import { indexMember, indexPruneBound, taskKeys, type TaskKeys } from './keys.js';
import {
  COMPLETE_MANY,
  CREATE_MANY,
  CREATE_TASK,
  DISCARD_TASK,
  FORGET_TASK,
  START_TASK,
  TRANSITION_TASK,
} from './scripts.js';

/** Fields a transition may set; JSON-valued ones are serialised here, once. */
export interface TaskUpdate {
  status?: TaskStatus;
  statusMessage?: string;
  cancelRequested?: boolean;
  awaitingInput?: boolean;
  progress?: number | Record<string, unknown>;
  result?: unknown;
  error?: TaskError;
  /** `null` clears it. */
  inputRequest?: InputRequest | null;
}

export type TransitionOutcome =
  | { ok: true; previous: TaskStatus; eventId?: string }
  | { ok: false; reason: 'missing' }
  | { ok: false; reason: 'refused'; current: TaskStatus };

/** One task to create: its record, its idempotency claim, the tenant's cap (0 = none). */
export interface CreateItem {
  record: TaskRecord;
  idempotency?: { key: string; value: string } | undefined;
  maxOpenTasks?: number;
}

export type CreateOutcome =
  | { created: true }
  | { created: false; idempotencyValue: string }
  | { created: false; full: true; openTasks: number };

interface TaskRedis extends Redis {
  longrunCreate(...args: (string | number)[]): Promise<string>;
  longrunCreateMany(numberOfKeys: number, ...args: string[]): Promise<string[]>;
  longrunTransition(...args: (string | number)[]): Promise<string[]>;
  longrunCompleteMany(numberOfKeys: number, ...args: (string | number)[]): Promise<string>;
  longrunForget(...args: (string | number)[]): Promise<string[]>;
  longrunDiscard(...args: (string | number)[]): Promise<number>;
  longrunStart(...args: (string | number)[]): Promise<[string, string[] | string | undefined]>;
}

/**
 * longrun's task records in Redis: one hash per task (expiring with the task's ttl), one sorted
 * set per tenant for listing, one key per idempotency key. A poll is one `HMGET` (`peek`).
 */
export class TaskStore {
  readonly keys: TaskKeys;
  private readonly redis: TaskRedis;

  constructor(
    redis: Redis,
    prefix: string,
    private readonly maxTtlMs: number,
  ) {
    this.keys = taskKeys(prefix);
    if (!('longrunCreate' in redis)) {
      redis.defineCommand('longrunCreate', { numberOfKeys: 6, lua: CREATE_TASK });
      redis.defineCommand('longrunCreateMany', { lua: CREATE_MANY });
      redis.defineCommand('longrunTransition', { numberOfKeys: 3, lua: TRANSITION_TASK });
      // The number of keys varies with the batch: passed first on each call.
      redis.defineCommand('longrunCompleteMany', { lua: COMPLETE_MANY });
      redis.defineCommand('longrunForget', { numberOfKeys: 4, lua: FORGET_TASK });
      redis.defineCommand('longrunDiscard', { numberOfKeys: 5, lua: DISCARD_TASK });
      redis.defineCommand('longrunStart', { numberOfKeys: 3, lua: START_TASK });
    }
    this.redis = redis as TaskRedis;
  }

  /** Stores a new record, and claims its idempotency key in the same atomic step. */
  async create(
    record: TaskRecord,
    idempotency?: { key: string; value: string },
    maxOpenTasks = 0,
  ): Promise<CreateOutcome> {
    const now = Date.now();
    const item = this.createItem({ record, idempotency, maxOpenTasks });
    const [task, index, idem, events, open] = item.keys;
    const [expiresAt, member, idemValue, id, cap, fields] = item.args;
    const reply = await this.redis.longrunCreate(
      task,
      index,
      idem,
      events,
      this.keys.outbox,
      open,
      expiresAt,
      member,
      this.pruneBound(now),
      idemValue,
      this.indexTtl,
      this.keys.eventsChannel,
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
    const keys: string[] = [this.keys.outbox];
    const args: string[] = [
      this.keys.eventsChannel,
      String(now),
      this.pruneBound(now),
      this.indexTtl,
    ];
    for (const item of items) {
      const made = this.createItem(item);
      keys.push(...made.keys);
      args.push(...made.args);
    }
    const replies = await this.redis.longrunCreateMany(keys.length, ...keys, ...args);
    return replies.map(toCreateOutcome);
  }

  /** A create's own keys (task, index, idempotency, events, open set) and arguments. */
  private createItem({ record, idempotency, maxOpenTasks = 0 }: CreateItem): {
    keys: [string, string, string, string, string];
    args: [string, string, string, string, string, string];
  } {
    const taskKey = this.keys.task(record.id);
    const member = indexMember(record.createdAt, record.id);
    const fields = serialise(record);
    fields.push('ix', member, 'idem', idempotency?.key ?? '', 'seq', '1');
    return {
      keys: [
        taskKey,
        this.keys.index(record.tenant),
        idempotency?.key ?? taskKey,
        this.keys.events(record.id),
        this.keys.openTasks(record.tenant),
      ],
      args: [
        String(record.createdAt + record.ttlMs),
        member,
        idempotency?.value ?? '',
        record.id,
        String(maxOpenTasks),
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

  /** The record, or `null` once it is gone (never created, expired or forgotten). */
  async get(id: string): Promise<TaskRecord | null> {
    return parse(id, await this.redis.hgetall(this.keys.task(id)));
  }

  /**
   * What a handle shows of a record (one `HMGET`), or `null` once it is gone: a poll's read, which
   * neither moves nor parses the input and answers, whatever their size.
   */
  async peek(id: string): Promise<HandleFields | null> {
    const [tenant, type, status, msg, created, updated, ttl, progress, result, error, request] =
      await this.redis.hmget(this.keys.task(id), ...HANDLE_FIELDS);
    if (!status || !tenant) return null;
    const view: HandleFields = {
      id,
      tenant,
      type: type ?? '',
      status: status as TaskStatus,
      statusMessage: msg ?? '',
      createdAt: Number(created),
      updatedAt: Number(updated),
      ttlMs: Number(ttl),
    };
    if (progress) view.progress = JSON.parse(progress) as TaskRecord['progress'];
    if (result !== null && result !== undefined) view.result = JSON.parse(result) as unknown;
    if (error) view.error = JSON.parse(error) as TaskError;
    if (request) view.inputRequest = JSON.parse(request) as InputRequest;
    return view;
  }

  /** Several records in one round trip; missing ones are `null`. */
  async getMany(ids: readonly string[]): Promise<(TaskRecord | null)[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.task(id));
    const replies = (await pipeline.exec()) ?? [];
    return ids.map((id, i) => {
      const [error, value] = replies[i] ?? [null, {}];
      if (error) throw error;
      return parse(id, value as Record<string, string>);
    });
  }

  /**
   * Applies `update` unless the task is terminal (or, with `requiredStatus`, not in that status).
   * `appendInput` adds an answer to the record's inputs in the same step.
   */
  async transition(
    id: string,
    update: TaskUpdate,
    opts: { requiredStatus?: TaskStatus; appendInput?: unknown } = {},
  ): Promise<TransitionOutcome> {
    const fields = serialise({ ...update, updatedAt: Date.now() });
    const append = 'appendInput' in opts ? (JSON.stringify(opts.appendInput) ?? 'null') : '';
    const reply = await this.redis.longrunTransition(
      this.keys.task(id),
      this.keys.events(id),
      this.keys.outbox,
      opts.requiredStatus ?? '',
      append,
      this.keys.eventsChannel,
      id,
      this.keys.tenantPrefix,
      ...fields,
    );
    return toOutcome(reply);
  }

  /**
   * Completes several tasks in one round trip and one script: each gets `completion` (status and
   * message) and its own result, guarded as by {@link transition}, whose outcome it returns.
   * `completion.status` must be terminal (the script takes each task out of the open-task set).
   */
  async completeMany(
    items: readonly { id: string; result: unknown }[],
    completion: { status: TaskStatus; statusMessage: string },
  ): Promise<TransitionOutcome[]> {
    if (!isTerminal(completion.status)) {
      throw new Error(`completeMany needs a terminal status, not ${completion.status}`);
    }
    const keys: string[] = [this.keys.outbox];
    const args: string[] = [
      this.keys.eventsChannel,
      this.keys.tenantPrefix,
      completion.status,
      completion.statusMessage,
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
   * Marks a task taken by a worker (`update`, unless it is gone or terminal) and returns the
   * record as it now is, in one round trip; `null` when there is nothing to run.
   */
  async start(id: string, update: TaskUpdate): Promise<TaskRecord | null> {
    const fields = serialise({ ...update, updatedAt: Date.now() });
    const [outcome, flat] = await this.redis.longrunStart(
      this.keys.task(id),
      this.keys.events(id),
      this.keys.outbox,
      this.keys.eventsChannel,
      id,
      ...fields,
    );
    if (outcome !== 'ok' || !Array.isArray(flat)) return null;
    const hash: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i] as string] = flat[i + 1] as string;
    return parse(id, hash);
  }

  /** Deletes a terminal task, its index entry and its idempotency key. */
  async forget(record: TaskRecord): Promise<TransitionOutcome> {
    const key = this.keys.task(record.id);
    const idem = await this.redis.hget(key, 'idem');
    const reply = await this.redis.longrunForget(
      key,
      this.keys.index(record.tenant),
      idem || key,
      this.keys.events(record.id),
      indexMember(record.createdAt, record.id),
      idem ? '1' : '0',
    );
    if (reply[0] === 'ok') return { ok: true, previous: record.status };
    if (reply[0] === 'missing') return { ok: false, reason: 'missing' };
    return { ok: false, reason: 'refused', current: reply[1] as TaskStatus };
  }

  /**
   * Takes back a record whose job was never added (or whose create timed out and may still land),
   * with its index entry, and its idempotency key while that still names this task.
   */
  async discard(record: TaskRecord, idempotency?: { key: string; value: string }): Promise<void> {
    await this.redis.longrunDiscard(
      this.keys.task(record.id),
      this.keys.index(record.tenant),
      idempotency?.key ?? this.keys.task(record.id),
      this.keys.events(record.id),
      this.keys.openTasks(record.tenant),
      indexMember(record.createdAt, record.id),
      idempotency?.value ?? '',
      record.id,
    );
  }

  /**
   * Up to `count` events after `afterId` (exclusive; `undefined` = from the oldest kept), oldest
   * first. Event ids are 1, 2, …; the list keeps the newest 1 000, so its first entry is
   * `seq - length + 1`.
   */
  async events(id: string, afterId: string | undefined, count = 100): Promise<TaskEvent[]> {
    const key = this.keys.events(id);
    const replies =
      (await this.redis.multi().hget(this.keys.task(id), 'seq').llen(key).exec()) ?? [];
    const last = Number(replies[0]?.[1] ?? 0);
    const first = last - Number(replies[1]?.[1] ?? 0) + 1;
    const from = Math.max(afterId === undefined ? first : Number(afterId) + 1, first);
    if (from > last) return [];
    const entries = await this.redis.lrange(key, from - first, from - first + count - 1);
    return entries.map(toEvent);
  }

  /** The newest event of a task, or `null`. */
  async lastEvent(id: string): Promise<TaskEvent | null> {
    const entry = await this.redis.lindex(this.keys.events(id), -1);
    return entry ? toEvent(entry) : null;
  }

  /** One event by id, or `null` when it was trimmed or the task is gone. */
  async event(id: string, eventId: string): Promise<TaskEvent | null> {
    const [event] = await this.events(id, String(Number(eventId) - 1), 1);
    return event?.id === eventId ? event : null;
  }

  /** A page of a tenant's index members after `after` (exclusive), newest first. */
  async indexPage(tenant: string, after: string | undefined, count: number): Promise<string[]> {
    return this.redis.zrangebylex(
      this.keys.index(tenant),
      after === undefined ? '-' : `(${after}`,
      '+',
      'LIMIT',
      0,
      count,
    );
  }

  /** Drops index members whose records are gone. */
  async pruneIndex(tenant: string, members: readonly string[]): Promise<void> {
    if (members.length > 0) await this.redis.zrem(this.keys.index(tenant), ...members);
  }
}

function toCreateOutcome(reply: string): CreateOutcome {
  if (reply === 'ok') return { created: true };
  if (reply.startsWith('dup ')) return { created: false, idempotencyValue: reply.slice(4) };
  if (reply.startsWith('full '))
    return { created: false, full: true, openTasks: Number(reply.slice(5)) };
  throw new Error(`unexpected reply to a create: ${reply}`);
}

function toOutcome(reply: string[]): TransitionOutcome {
  if (reply[0] === 'ok') {
    return { ok: true, previous: reply[1] as TaskStatus, eventId: reply[2] ?? '' };
  }
  if (reply[0] === 'missing') return { ok: false, reason: 'missing' };
  return { ok: false, reason: 'refused', current: reply[1] as TaskStatus };
}

function toEvent(entry: string): TaskEvent {
  const raw = JSON.parse(entry) as { s: number; st: TaskStatus; m: string; u: number; p?: string };
  const event: TaskEvent = {
    id: String(raw.s),
    status: raw.st,
    statusMessage: raw.m,
    updatedAt: raw.u,
  };
  if (raw.p) event.progress = JSON.parse(raw.p) as TaskEvent['progress'];
  return event;
}

type Serialisable = Partial<Omit<TaskRecord, 'inputRequest'>> & {
  inputRequest?: InputRequest | null;
};

/** The hash fields to write, flat (`field, value, …`), as HSET takes them. */
function serialise(record: Serialisable): string[] {
  const out: string[] = [];
  const put = (field: string, value: string) => out.push(field, value);
  if (record.id !== undefined) put('id', record.id);
  if (record.tenant !== undefined) put('tenant', record.tenant);
  if (record.type !== undefined) put('type', record.type);
  if (record.status !== undefined) put('status', record.status);
  if (record.statusMessage !== undefined) put('msg', record.statusMessage);
  if (record.createdAt !== undefined) put('created', String(record.createdAt));
  if (record.updatedAt !== undefined) put('updated', String(record.updatedAt));
  if (record.ttlMs !== undefined) put('ttl', String(record.ttlMs));
  if (record.input !== undefined) put('input', JSON.stringify(record.input));
  if (record.cancelRequested !== undefined) put('cancel', record.cancelRequested ? '1' : '0');
  if (record.awaitingInput !== undefined) put('awaiting', record.awaitingInput ? '1' : '0');
  if (record.progress !== undefined) put('progress', JSON.stringify(record.progress));
  if ('result' in record) put('result', JSON.stringify(record.result) ?? 'null');
  if (record.error !== undefined) put('error', JSON.stringify(record.error));
  if (record.inputRequest !== undefined) {
    put('inputRequest', record.inputRequest === null ? '' : JSON.stringify(record.inputRequest));
  }
  if (record.inputs !== undefined) put('inputs', JSON.stringify(record.inputs));
  if (record.callback !== undefined) put('callback', JSON.stringify(record.callback));
  return out;
}

/** The hash fields `peek` reads, in the order it reads them. */
const HANDLE_FIELDS = [
  'tenant',
  'type',
  'status',
  'msg',
  'created',
  'updated',
  'ttl',
  'progress',
  'result',
  'error',
  'inputRequest',
] as const;

function parse(id: string, hash: Record<string, string>): TaskRecord | null {
  if (!hash.status || !hash.tenant) return null;
  const record: TaskRecord = {
    id,
    tenant: hash.tenant,
    type: hash.type ?? '',
    status: hash.status as TaskStatus,
    statusMessage: hash.msg ?? '',
    createdAt: Number(hash.created),
    updatedAt: Number(hash.updated),
    ttlMs: Number(hash.ttl),
    input: hash.input ? (JSON.parse(hash.input) as Record<string, unknown>) : {},
    cancelRequested: hash.cancel === '1',
    awaitingInput: hash.awaiting === '1',
    inputs: hash.inputs ? (JSON.parse(hash.inputs) as unknown[]) : [],
  };
  if (hash.progress) record.progress = JSON.parse(hash.progress) as TaskRecord['progress'];
  if (hash.result !== undefined) record.result = JSON.parse(hash.result) as unknown;
  if (hash.error) record.error = JSON.parse(hash.error) as TaskError;
  if (hash.inputRequest) record.inputRequest = JSON.parse(hash.inputRequest) as InputRequest;
  if (hash.callback) record.callback = JSON.parse(hash.callback) as Callback;
  return record;
}
