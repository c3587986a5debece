import type { StoredCallback } from './a2a-push.js';
import type { InputRequest, TaskError, TaskHandle } from './schemas.js';
import type { TaskStatus } from './status.js';

/** What longrun stores about a task beside its BullMQ job: the source of truth for a poll. */
export interface TaskRecord {
  id: string;
  tenant: string;
  type: string;
  status: TaskStatus;
  statusMessage: string;
  createdAt: number;
  updatedAt: number;
  ttlMs: number;
  input: Record<string, unknown>;
  cancelRequested: boolean;
  awaitingInput: boolean;
  progress?: number | Record<string, unknown>;
  result?: unknown;
  error?: TaskError;
  inputRequest?: InputRequest;
  /** Answers given so far, in the order the handler asked for them. */
  inputs: unknown[];
  /**
   * Where status changes are POSTed: longrun's webhook (the submit's `callback`) or an A2A push
   * notification config (`format: 'a2a'`); never shown in the handle (it may carry a secret).
   */
  callback?: StoredCallback;
  /** BullMQ priority the task was submitted with (kept so a re-added job keeps it). */
  priority?: number;
  /** When a delayed task may start (ms since the epoch); unset: at once. */
  runAt?: number;
  /** How long one run may take (ms), as the submit asked; unset: the job type's default. */
  timeoutMs?: number;
  /** A worker recorded the task's start (the `start` event). */
  started?: boolean;
  /** Times the reconciler added the task's job again. */
  repairs?: number;
  /** The schedule whose tick made this task (`POST /v1/schedules`); unset: submitted directly. */
  scheduleId?: string;
  /** The submit's `tags` (distinct, in the order given); unset: none. */
  tags?: string[];
  /** The task this one replays (`POST /v1/jobs/{id}/replay`); unset: submitted directly. */
  replayOf?: string;
  /**
   * The W3C `traceparent` of the submit's span (OpenTelemetry, decision 65): the runs, webhook
   * deliveries and the handle's `traceId` belong to its trace. Unset when no tracing was on.
   */
  traceparent?: string;
  /** The `traceparent` of the run that failed and will be retried: the retry's span links to it. */
  lastRunTrace?: string;
  /** The A2A context a client started it in (A2A `contextId`); unset: the task's own id. */
  contextId?: string;
  /** The task whose handler made this one (`ctx.runTask`); unset: submitted directly. */
  parentTaskId?: string;
  /** The child tasks this task's handler made, in order. */
  childTaskIds?: string[];
  /**
   * The newest durable steps (`ctx.step`, sleeps, children, waitpoints), oldest first: at most
   * `HANDLE_STEPS` of them (issue 40; `GET /v1/jobs/{id}/steps` pages them all).
   */
  steps?: StepSummary[];
  /** How many steps the task recorded (all of them, not only those in `steps`). */
  stepCount?: number;
}

/** How many of its newest steps a handle carries (`stail` in lua/includes/steps.lua). */
export const HANDLE_STEPS = 50;

/**
 * One entry of a durable task's steps: recorded (`endedAt`, when it was written; a sleep's, when
 * the run went on past it), or a sleep in progress (`waiting` until `until`).
 */
export type StepSummary =
  | { name: string; status: 'completed'; endedAt: number }
  | { name: string; status: 'waiting'; until: number };

/** A step as the API shows it: its times as ISO strings. */
export type StepView =
  | { name: string; status: 'completed'; endedAt: string }
  | { name: string; status: 'waiting'; until: string };

/** @example stepView({ name: 'a', status: 'completed', endedAt: 0 }).endedAt // '1970-…Z' */
export function stepView(s: StepSummary): StepView {
  return s.status === 'waiting'
    ? { name: s.name, status: 'waiting', until: new Date(s.until).toISOString() }
    : { name: s.name, status: 'completed', endedAt: new Date(s.endedAt).toISOString() };
}

/**
 * What a handle shows of a record, and its tenant (for the ownership check): what a poll reads.
 * Not the input, the answers or the callback, which can be large or secret.
 */
export type HandleFields = Pick<
  TaskRecord,
  | 'id'
  | 'tenant'
  | 'type'
  | 'status'
  | 'statusMessage'
  | 'createdAt'
  | 'updatedAt'
  | 'ttlMs'
  | 'progress'
  | 'result'
  | 'error'
  | 'inputRequest'
  | 'scheduleId'
  | 'tags'
  | 'replayOf'
  | 'traceparent'
  | 'contextId'
  | 'parentTaskId'
  | 'childTaskIds'
  | 'steps'
  | 'stepCount'
>;

/** One entry of a task's event stream: the state right after a change. */
export interface TaskEvent {
  /** The task's event number (1, 2, …), used as the SSE event id. */
  id: string;
  status: TaskStatus;
  statusMessage: string;
  updatedAt: number;
  progress?: number | Record<string, unknown>;
  /** The durable step this event recorded or changed (issue 40: an event carries only it). */
  step?: StepSummary;
}

/**
 * The handle as it was at `event`: without the task's steps, with the one step the event
 * recorded or changed (`step`), so that a stream of a 1 000-step task does not carry its list
 * 1 000 times: the record's fields with the event's state laid over them.
 * @example handleAt(record, event, 5000).status // event.status
 */
export function handleAt(
  record: HandleFields,
  event: TaskEvent,
  pollIntervalMs: number,
): TaskHandle {
  const at: HandleFields = {
    ...record,
    status: event.status,
    statusMessage: event.statusMessage,
    updatedAt: event.updatedAt,
  };
  delete at.steps;
  if (event.progress !== undefined) at.progress = event.progress;
  const handle = toHandle(at, pollIntervalMs);
  if (event.step) handle.step = stepView(event.step);
  return handle;
}

/**
 * The public handle for a record.
 * @example toHandle(record, 5000).status // 'working'
 */
export function toHandle(record: HandleFields, pollIntervalMs: number): TaskHandle {
  const createdAt = new Date(record.createdAt).toISOString();
  const handle: TaskHandle = {
    resultType: 'task',
    taskId: record.id,
    type: record.type,
    status: record.status,
    statusMessage: record.statusMessage,
    createdAt,
    // A new task's two times are the same: one string for both.
    lastUpdatedAt:
      record.updatedAt === record.createdAt ? createdAt : new Date(record.updatedAt).toISOString(),
    ttlMs: record.ttlMs,
    pollIntervalMs,
  };
  if (record.progress !== undefined) handle.progress = record.progress;
  if (record.status === 'completed') handle.result = record.result ?? null;
  if (record.status === 'failed' || record.status === 'cancelled') {
    handle.error = record.error ?? { message: `Task ${record.status}` };
  }
  if (record.status === 'input_required' && record.inputRequest) {
    handle.inputRequest = record.inputRequest;
  }
  if (record.scheduleId) handle.scheduleId = record.scheduleId;
  if (record.tags?.length) handle.tags = record.tags;
  if (record.replayOf) handle.replayOf = record.replayOf;
  // `00-<trace id>-<span id>-<flags>`: the trace id is the 32 hex digits after the version.
  if (record.traceparent) handle.traceId = record.traceparent.slice(3, 35);
  if (record.contextId) handle.contextId = record.contextId;
  if (record.parentTaskId) handle.parentTaskId = record.parentTaskId;
  if (record.childTaskIds?.length) handle.childTaskIds = record.childTaskIds;
  if (record.steps?.length) handle.steps = record.steps.map(stepView);
  if (record.stepCount) handle.stepCount = record.stepCount;
  return handle;
}
