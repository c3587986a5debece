import { TASK_STATUSES, type TaskStatus } from './status.js';
import {
  HANDLE_STEPS,
  type HandleFields,
  type StepSummary,
  type TaskRecord,
} from './task-record.js';

/**
 * The hash field of each record property: the one place the record's Redis layout is written
 * down. The Lua scripts read these names from the include generated from it (`F.status`, …;
 * engine's `src/lua/core-include.ts`), so a field cannot be spelled two ways.
 */
export const FIELD = {
  id: 'id',
  tenant: 'tenant',
  type: 'type',
  status: 'status',
  statusMessage: 'msg',
  createdAt: 'created',
  updatedAt: 'updated',
  ttlMs: 'ttl',
  input: 'input',
  cancelRequested: 'cancel',
  awaitingInput: 'awaiting',
  progress: 'progress',
  result: 'result',
  error: 'error',
  inputRequest: 'inputRequest',
  inputs: 'inputs',
  callback: 'callback',
  priority: 'priority',
  runAt: 'runAt',
  timeoutMs: 'timeout',
  started: 'started',
  repairs: 'repairs',
  scheduleId: 'schedule',
  tags: 'tags',
  replayOf: 'replayOf',
  traceparent: 'trace',
  lastRunTrace: 'runTrace',
  /** The A2A context a client started the task in (A2A `contextId`); unset: the task's id. */
  contextId: 'ctx',
  /** Durable tasks (issue 29): the parent task that made this one with `ctx.runTask(s)`. */
  parentTaskId: 'parent',
  /** The ids of the child tasks this task made, in order (JSON array). */
  childTaskIds: 'children',
  /**
   * An older version's summary of the steps, the whole list as one JSON array: read still (its
   * task's first new step moves it into the entries below, lua/includes/steps.lua).
   */
  steps: 'steps',
  /** The number of step entries (`s<n>`, see `stepField`): the handle's `stepCount` (issue 40). */
  stepCount: 'sc',
  /** The newest HANDLE_STEPS entries, as one JSON array: what a handle shows. */
  stepTail: 'stail',
  /** Bookkeeping: the `ctx.step` calls recorded (held to LONGRUN_MAX_STEPS). */
  stepCalls: 'scalls',
  /** Bookkeeping: the sleep in progress, `<entry number> <name>` ('' or absent: none). */
  sleeping: 'sw',
  /** Bookkeeping: children that reached a terminal status (each counted once, see `cd:<id>`). */
  childrenDone: 'cdone',
  /** Bookkeeping: children made so far (the length of `children`). */
  childrenTotal: 'ctotal',
  /** Bookkeeping: what a parked durable task waits for ('children', 'wp:<step>', or none). */
  wait: 'wait',
  /** Bookkeeping, not part of `TaskRecord`: the last event number (SSE ids). */
  seq: 'seq',
  /** The idempotency key naming this task, if any (absent, or '' from older versions, when none). */
  idempotencyKey: 'idem',
  /**
   * Bookkeeping: '1' once a replay of the task's idempotency key handed it to another request
   * while it was untouched, so a create that timed out keeps it instead of taking it back.
   */
  replayed: 'replayed',
  /**
   * Bookkeeping: the bytes a task created under a storage budget counts against it (engine
   * decision 31); the budget counts them under the task's expiry bucket (`lua/includes/usage.lua`).
   */
  usageBytes: 'ub',
  /**
   * Bookkeeping: the last change a caller named and its reply (`<op> <reply words>`, engine
   * `lua/includes/op-note.lua`): the same call run again (ioredis resends a call whose reply was
   * lost with the connection) answers as it did instead of being refused.
   */
  op: 'op',
} as const;

/** The record field holding a durable task's step result: `st:<name>` (issue 29). */
export function stepField(name: string): string {
  return `st:${name}`;
}

/**
 * A task's history is kept in its record (engine decision 57): each event before the newest is a
 * field `e<n>` (its id n), the newest is the record's own state. Bookkeeping, not part of
 * `TaskRecord`; the engine's `lua/includes/write-event.lua` writes them, its `TaskLog` reads them.
 */
export const EVENT_FIELD_PREFIX = 'e';

/** The record field holding event `n` once a later one was written: `e<n>`. */
export function eventField(n: number | string): string {
  return `${EVENT_FIELD_PREFIX}${n}`;
}

type Kind = 'string' | 'status' | 'int' | 'bool' | 'json';

const KINDS: Record<keyof TaskRecord, Kind> = {
  id: 'string',
  tenant: 'string',
  type: 'string',
  status: 'status',
  statusMessage: 'string',
  createdAt: 'int',
  updatedAt: 'int',
  ttlMs: 'int',
  input: 'json',
  cancelRequested: 'bool',
  awaitingInput: 'bool',
  progress: 'json',
  result: 'json',
  error: 'json',
  inputRequest: 'json',
  inputs: 'json',
  callback: 'json',
  priority: 'int',
  runAt: 'int',
  timeoutMs: 'int',
  started: 'bool',
  repairs: 'int',
  scheduleId: 'string',
  tags: 'json',
  replayOf: 'string',
  traceparent: 'string',
  lastRunTrace: 'string',
  contextId: 'string',
  parentTaskId: 'string',
  childTaskIds: 'json',
  steps: 'json',
  stepCount: 'int',
};

/** What a write may carry: any record property; `inputRequest: null` clears it. */
export type RecordUpdate = Partial<Omit<TaskRecord, 'inputRequest'>> & {
  inputRequest?: TaskRecord['inputRequest'] | null;
};

/** A record in Redis that does not have the layout this codec writes. */
export class CorruptRecordError extends Error {
  override name = 'CorruptRecordError';
}

/**
 * The hash fields to write, flat (`field, value, …`) as HSET takes them. `undefined` properties
 * are left out; `inputRequest: null` writes '' (cleared).
 * @example encodeRecord({ status: 'working', updatedAt: 1 }) // ['status', 'working', 'updated', '1']
 */
export function encodeRecord(update: RecordUpdate): string[] {
  const out: string[] = [];
  for (const key in update) {
    const value = update[key as keyof RecordUpdate];
    if (value === undefined) continue;
    const name = key as keyof TaskRecord;
    const kind = KINDS[name];
    if (kind === undefined) throw new Error(`Not a record field: ${key}`);
    out.push(FIELD[name], encodeValue(kind, value));
  }
  return out;
}

function encodeValue(kind: Kind, value: unknown): string {
  switch (kind) {
    case 'string':
    case 'status':
      return value as string;
    case 'int':
      return String(value);
    case 'bool':
      return value ? '1' : '0';
    case 'json':
      return value === null ? '' : (JSON.stringify(value) ?? 'null');
  }
}

/** The fields a handle shows (and the tenant), in the order `decodeHandle` reads them. */
export const HANDLE_FIELDS = [
  FIELD.tenant,
  FIELD.type,
  FIELD.status,
  FIELD.statusMessage,
  FIELD.createdAt,
  FIELD.updatedAt,
  FIELD.ttlMs,
  FIELD.progress,
  FIELD.error,
  FIELD.inputRequest,
  FIELD.scheduleId,
  FIELD.tags,
  FIELD.replayOf,
  FIELD.traceparent,
  FIELD.contextId,
  FIELD.parentTaskId,
  FIELD.childTaskIds,
  FIELD.stepCount,
  // Last, so that a summary (SUMMARY_FIELDS) is this list without them.
  FIELD.steps,
  FIELD.stepTail,
  FIELD.result,
] as const;

/** A list item's fields: the handle's without its steps and result (HANDLE_FIELDS less 3). */
export const SUMMARY_FIELDS = HANDLE_FIELDS.slice(0, -3);

/** Each handle field's place in `HANDLE_FIELDS`: `decodeHandle` reads values by name, not by hand-counted positions. */
const AT = Object.fromEntries(HANDLE_FIELDS.map((f, i) => [f, i])) as Record<
  (typeof HANDLE_FIELDS)[number],
  number
>;

/**
 * The handle fields of a record from an `HMGET` of `HANDLE_FIELDS` (or `SUMMARY_FIELDS`); `null`
 * when the record is gone.
 */
export function decodeHandle(id: string, values: readonly (string | null)[]): HandleFields | null {
  const at = (field: (typeof HANDLE_FIELDS)[number]): string | null | undefined =>
    values[AT[field]];
  const [tenant, status] = [at(FIELD.tenant), at(FIELD.status)];
  const [type, msg, created, updated, ttl] = [
    at(FIELD.type),
    at(FIELD.statusMessage),
    at(FIELD.createdAt),
    at(FIELD.updatedAt),
    at(FIELD.ttlMs),
  ];
  const [progress, error, request, schedule] = [
    at(FIELD.progress),
    at(FIELD.error),
    at(FIELD.inputRequest),
    at(FIELD.scheduleId),
  ];
  const [tags, replayOf, tp, ctx] = [
    at(FIELD.tags),
    at(FIELD.replayOf),
    at(FIELD.traceparent),
    at(FIELD.contextId),
  ];
  const [parent, children, steps, stepCount, tail] = [
    at(FIELD.parentTaskId),
    at(FIELD.childTaskIds),
    at(FIELD.steps),
    at(FIELD.stepCount),
    at(FIELD.stepTail),
  ];
  // The result is the last field: absent from a summary's read (SUMMARY_FIELDS).
  const result = at(FIELD.result);
  if (!status || !tenant) return null;
  const view: HandleFields = {
    id,
    tenant,
    type: type ?? '',
    status: checkStatus(id, status),
    statusMessage: msg ?? '',
    createdAt: checkInt(id, FIELD.createdAt, created),
    updatedAt: checkInt(id, FIELD.updatedAt, updated),
    ttlMs: checkInt(id, FIELD.ttlMs, ttl),
  };
  if (progress) view.progress = parseJson(id, FIELD.progress, progress) as HandleFields['progress'];
  if (error) view.error = parseJson(id, FIELD.error, error) as HandleFields['error'];
  if (request) view.inputRequest = parseJson(id, FIELD.inputRequest, request) as never;
  if (schedule) view.scheduleId = schedule;
  if (tags) view.tags = parseJson(id, FIELD.tags, tags) as string[];
  if (replayOf) view.replayOf = replayOf;
  if (tp) view.traceparent = tp;
  if (ctx) view.contextId = ctx;
  if (parent) view.parentTaskId = parent;
  if (children) view.childTaskIds = parseJson(id, FIELD.childTaskIds, children) as string[];
  if (stepCount) {
    view.stepCount = checkInt(id, FIELD.stepCount, stepCount);
    if (tail) view.steps = parseJson(id, FIELD.stepTail, tail) as StepSummary[];
  } else if (steps) {
    // An older version's whole list (until its task records a step here, or expires).
    const all = parseJson(id, FIELD.steps, steps) as StepSummary[];
    if (all.length > 0) view.stepCount = all.length;
    view.steps = all.slice(-HANDLE_STEPS);
  }
  if (result !== null && result !== undefined) view.result = parseJson(id, FIELD.result, result);
  return view;
}

/** The record from its whole hash (`HGETALL`); `null` when it is gone. */
export function decodeRecord(id: string, hash: Record<string, string>): TaskRecord | null {
  const handle = decodeHandle(
    id,
    HANDLE_FIELDS.map((f) => hash[f] ?? null),
  );
  if (!handle) return null;
  const input = hash[FIELD.input];
  const inputs = hash[FIELD.inputs];
  const record: TaskRecord = {
    ...handle,
    input: input ? (parseJson(id, FIELD.input, input) as TaskRecord['input']) : {},
    cancelRequested: hash[FIELD.cancelRequested] === '1',
    awaitingInput: hash[FIELD.awaitingInput] === '1',
    inputs: inputs ? (parseJson(id, FIELD.inputs, inputs) as unknown[]) : [],
  };
  const callback = hash[FIELD.callback];
  if (callback) record.callback = parseJson(id, FIELD.callback, callback) as TaskRecord['callback'];
  const priority = hash[FIELD.priority];
  if (priority) record.priority = checkInt(id, FIELD.priority, priority);
  const runAt = hash[FIELD.runAt];
  if (runAt) record.runAt = checkInt(id, FIELD.runAt, runAt);
  const timeoutMs = hash[FIELD.timeoutMs];
  if (timeoutMs) record.timeoutMs = checkInt(id, FIELD.timeoutMs, timeoutMs);
  if (hash[FIELD.started] === '1') record.started = true;
  const repairs = hash[FIELD.repairs];
  if (repairs) record.repairs = checkInt(id, FIELD.repairs, repairs);
  const lastRunTrace = hash[FIELD.lastRunTrace];
  if (lastRunTrace) record.lastRunTrace = lastRunTrace;
  return record;
}

const STATUSES: ReadonlySet<string> = new Set(TASK_STATUSES);

function checkStatus(id: string, value: string): TaskStatus {
  if (!STATUSES.has(value)) throw new CorruptRecordError(`task ${id}: unknown status "${value}"`);
  return value as TaskStatus;
}

function checkInt(id: string, field: string, value: string | null | undefined): number {
  const n = Number(value);
  if (value === null || value === undefined || value === '' || !Number.isSafeInteger(n)) {
    throw new CorruptRecordError(`task ${id}: field ${field} is not a whole number`);
  }
  return n;
}

function parseJson(id: string, field: string, value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new CorruptRecordError(`task ${id}: field ${field} is not JSON`);
  }
}
