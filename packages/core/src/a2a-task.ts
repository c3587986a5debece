import { LIFECYCLE } from './lifecycle.js';
import type { TaskHandle } from './schemas.js';
import { assertNever } from './status.js';

/**
 * A longrun task as an A2A v1.0 `Task`, in the protocol's JSON form (the proto's JSON mapping, as
 * the HTTP+JSON binding and push notifications carry it): the A2A door reads it with the SDK's
 * own codec (`Task.fromJSON`), the webhook dispatcher sends it as it is. Fields the proto's JSON
 * leaves out when empty (an empty `history`, no artifacts) are left out here too.
 */
export interface A2ATask {
  id: string;
  contextId: string;
  status: A2ATaskStatus;
  /** Only on a completed task: the artifact `result`. */
  artifacts?: A2AArtifact[];
  /** The task's messages: the agent's current status message (the engine keeps no others). */
  history: A2AMessage[];
  metadata: {
    type: string;
    statusMessage: string;
    createdAt: string;
    scheduleId?: string;
  };
}

/** The A2A states a longrun task can be in (`TASK_STATE_REJECTED` has no task). */
export type A2ATaskState =
  | 'TASK_STATE_SUBMITTED'
  | 'TASK_STATE_WORKING'
  | 'TASK_STATE_INPUT_REQUIRED'
  | 'TASK_STATE_COMPLETED'
  | 'TASK_STATE_FAILED'
  | 'TASK_STATE_CANCELED';

export interface A2ATaskStatus {
  state: A2ATaskState;
  message: A2AMessage;
  /** ISO 8601: the handle's `lastUpdatedAt`. */
  timestamp: string;
}

export interface A2AMessage {
  messageId: string;
  contextId: string;
  taskId: string;
  role: 'ROLE_AGENT';
  parts: A2APart[];
}

/** A text part or a data part (any JSON value). */
export type A2APart =
  { text: string; mediaType: 'text/plain' } | { data: unknown; mediaType: 'application/json' };

export interface A2AArtifact {
  artifactId: string;
  name: string;
  description: string;
  parts: A2APart[];
}

/**
 * The body of an A2A push notification: a `StreamResponse` carrying the task as it was at the
 * change that is being notified (A2A v1.0, "Push Notification Payload").
 */
export interface A2AStreamResponse {
  task: A2ATask;
}

/** The one artifact a completed task has: its result as a data part. */
export const A2A_RESULT_ARTIFACT = 'result';

/**
 * The A2A task for a longrun handle: the only place longrun's statuses become A2A states, so
 * every A2A call (send, get, list, cancel, stream) and every push notification shows the same
 * task for the same handle, on any replica and in any worker. The A2A task id is the longrun
 * `taskId`; its `contextId` the one the A2A client started it in, else the task id; `history`
 * is the current status message (longrun keeps no conversation; GetTask's `historyLength` trims it).
 *
 * - `working` → `TASK_STATE_SUBMITTED` until a worker picks the task up (see `pickedUp`), then
 *   `TASK_STATE_WORKING`; the status message is the `statusMessage`, with `{progress}` as data.
 * - `input_required` → `TASK_STATE_INPUT_REQUIRED`: the question as text and `{inputRequest}`
 *   (its message and JSON Schema) as data.
 * - `completed` → `TASK_STATE_COMPLETED` with the artifact `result` (the result as a data part).
 * - `failed` → `TASK_STATE_FAILED` with the error's message as text and `{error}` as data.
 * - `cancelled` → `TASK_STATE_CANCELED`.
 * @example toA2ATask(handle).status.state // 'TASK_STATE_WORKING'
 */
export function toA2ATask(handle: TaskHandle): A2ATask {
  const id = handle.taskId;
  let state: A2ATaskState;
  let parts: A2APart[];
  switch (handle.status) {
    case 'working':
      state = pickedUp(handle) ? 'TASK_STATE_WORKING' : 'TASK_STATE_SUBMITTED';
      parts = [textPart(handle.statusMessage)];
      if (handle.progress !== undefined) parts.push(dataPart({ progress: handle.progress }));
      break;
    case 'input_required':
      state = 'TASK_STATE_INPUT_REQUIRED';
      parts = handle.inputRequest
        ? [textPart(handle.inputRequest.message), dataPart({ inputRequest: handle.inputRequest })]
        : [textPart(handle.statusMessage)];
      break;
    case 'completed':
      state = 'TASK_STATE_COMPLETED';
      parts = [textPart(handle.statusMessage)];
      break;
    case 'failed':
      state = 'TASK_STATE_FAILED';
      parts = handle.error
        ? [textPart(handle.error.message), dataPart({ error: handle.error })]
        : [textPart(handle.statusMessage)];
      break;
    case 'cancelled':
      state = 'TASK_STATE_CANCELED';
      parts = [textPart(handle.statusMessage)];
      break;
    default:
      return assertNever(handle.status);
  }
  const context = handle.contextId ?? id;
  const task: A2ATask = {
    id,
    contextId: context,
    status: {
      state,
      message: {
        // The same handle gives the same message id on every replica.
        messageId: `${id}@${handle.lastUpdatedAt}`,
        contextId: context,
        taskId: id,
        role: 'ROLE_AGENT',
        parts,
      },
      timestamp: handle.lastUpdatedAt,
    },
    metadata: {
      type: handle.type,
      statusMessage: handle.statusMessage,
      createdAt: handle.createdAt,
      ...(handle.scheduleId === undefined ? {} : { scheduleId: handle.scheduleId }),
    },
    history: [],
  };
  task.history.push(task.status.message);
  if (handle.status === 'completed') {
    task.artifacts = [
      {
        artifactId: A2A_RESULT_ARTIFACT,
        name: A2A_RESULT_ARTIFACT,
        description: 'The value the job returned',
        parts: [dataPart(handle.result ?? null)],
      },
    ];
  }
  return task;
}

/**
 * A worker has taken the task: anything but the `statusMessage` a submit, a requeue (`queued…`)
 * or a delayed submit (`scheduled`, the engine's `SCHEDULED`) writes, or progress reported. A
 * first run that ends quickly writes nothing before its outcome (decision 18), so a short task
 * can go from submitted to completed directly.
 */
function pickedUp(handle: TaskHandle): boolean {
  if (handle.progress !== undefined) return true;
  const message = handle.statusMessage;
  return !message.startsWith(LIFECYCLE.submit.statusMessage) && message !== 'scheduled';
}

function textPart(text: string): A2APart {
  return { text, mediaType: 'text/plain' };
}

function dataPart(data: unknown): A2APart {
  return { data, mediaType: 'application/json' };
}
