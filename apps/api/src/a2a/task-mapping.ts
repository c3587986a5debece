import { randomUUID } from 'node:crypto';
import {
  Role,
  TaskState,
  type Artifact,
  type Message,
  type Part,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import { assertNever, LIFECYCLE, type TaskHandle } from '@longrun/core';

/** The one artifact a completed task has: its result as a data part. */
export const RESULT_ARTIFACT = 'result';

/**
 * The A2A task for a longrun handle: the only place longrun's statuses become A2A states, so
 * every call (send, get, list, cancel, stream) answers the same task for the same handle, on any
 * replica. The A2A task id is the longrun `taskId`, and so is its `contextId` (the engine keeps
 * no A2A context of its own); `history` stays empty (longrun keeps no messages).
 *
 * - `working` → `TASK_STATE_SUBMITTED` until a worker picks the task up (see `pickedUp`), then
 *   `TASK_STATE_WORKING`; the status message is the `statusMessage`, with `{progress}` as data.
 * - `input_required` → `TASK_STATE_INPUT_REQUIRED`: the question as text and `{inputRequest}`
 *   (its message and JSON Schema) as data.
 * - `completed` → `TASK_STATE_COMPLETED` with the artifact `result` (the result as a data part).
 * - `failed` → `TASK_STATE_FAILED` with the error's message as text and `{error}` as data.
 * - `cancelled` → `TASK_STATE_CANCELED`.
 * @example toA2ATask(handle).status?.state // TaskState.TASK_STATE_WORKING
 */
export function toA2ATask(handle: TaskHandle): Task {
  const id = handle.taskId;
  let state: TaskState;
  let parts: Part[];
  switch (handle.status) {
    case 'working':
      state = pickedUp(handle) ? TaskState.TASK_STATE_WORKING : TaskState.TASK_STATE_SUBMITTED;
      parts = [textPart(handle.statusMessage)];
      if (handle.progress !== undefined) parts.push(dataPart({ progress: handle.progress }));
      break;
    case 'input_required':
      state = TaskState.TASK_STATE_INPUT_REQUIRED;
      parts = handle.inputRequest
        ? [textPart(handle.inputRequest.message), dataPart({ inputRequest: handle.inputRequest })]
        : [textPart(handle.statusMessage)];
      break;
    case 'completed':
      state = TaskState.TASK_STATE_COMPLETED;
      parts = [textPart(handle.statusMessage)];
      break;
    case 'failed':
      state = TaskState.TASK_STATE_FAILED;
      parts = handle.error
        ? [textPart(handle.error.message), dataPart({ error: handle.error })]
        : [textPart(handle.statusMessage)];
      break;
    case 'cancelled':
      state = TaskState.TASK_STATE_CANCELED;
      parts = [textPart(handle.statusMessage)];
      break;
    default:
      return assertNever(handle.status);
  }
  return {
    id,
    contextId: id,
    status: {
      state,
      // The same handle gives the same message id on every replica.
      message: agentMessage(id, `${id}@${handle.lastUpdatedAt}`, parts),
      timestamp: handle.lastUpdatedAt,
    },
    artifacts: handle.status === 'completed' ? [resultArtifact(handle.result)] : [],
    history: [],
    metadata: {
      type: handle.type,
      statusMessage: handle.statusMessage,
      createdAt: handle.createdAt,
      ...(handle.scheduleId === undefined ? {} : { scheduleId: handle.scheduleId }),
    },
  };
}

/**
 * A start the engine refused (unknown type, invalid input, a cap): `TASK_STATE_REJECTED` with
 * why, as text and as data (`{problem}`, the HTTP API's problem document). No longrun task
 * exists for it, so its id is not found afterwards.
 */
export function rejectedTask(contextId: string, detail: string, problem: unknown): Task {
  const id = randomUUID();
  const context = contextId || id;
  return {
    id,
    contextId: context,
    status: {
      state: TaskState.TASK_STATE_REJECTED,
      message: agentMessage(id, randomUUID(), [textPart(detail), dataPart({ problem })], context),
      timestamp: new Date().toISOString(),
    },
    artifacts: [],
    history: [],
    metadata: undefined,
  };
}

/** Whether a send (blocking or streaming) stops following the task here: terminal or waiting. */
export function interrupted(task: Task): boolean {
  const state = task.status?.state;
  return state !== TaskState.TASK_STATE_SUBMITTED && state !== TaskState.TASK_STATE_WORKING;
}

/**
 * What a stream sends when the task moves from `previous` to `next`: each new artifact (the
 * result, just before the completed status), then the status.
 */
export function streamUpdates(previous: Task, next: Task): StreamResponse[] {
  const known = new Set(previous.artifacts.map((a) => a.artifactId));
  const updates: StreamResponse[] = next.artifacts
    .filter((artifact) => !known.has(artifact.artifactId))
    .map((artifact) => ({
      payload: {
        $case: 'artifactUpdate',
        value: {
          taskId: next.id,
          contextId: next.contextId,
          artifact,
          append: false,
          lastChunk: true,
          metadata: undefined,
        },
      },
    }));
  updates.push({
    payload: {
      $case: 'statusUpdate',
      value: {
        taskId: next.id,
        contextId: next.contextId,
        status: next.status,
        metadata: next.metadata,
      },
    },
  });
  return updates;
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

function resultArtifact(result: unknown): Artifact {
  return {
    artifactId: RESULT_ARTIFACT,
    name: RESULT_ARTIFACT,
    description: 'The value the job returned',
    parts: [dataPart(result ?? null)],
    metadata: undefined,
    extensions: [],
  };
}

function agentMessage(taskId: string, messageId: string, parts: Part[], contextId = taskId) {
  const message: Message = {
    messageId,
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return message;
}

function textPart(text: string): Part {
  return {
    content: { $case: 'text', value: text },
    metadata: undefined,
    filename: '',
    mediaType: 'text/plain',
  };
}

function dataPart(data: unknown): Part {
  return {
    content: { $case: 'data', value: data },
    metadata: undefined,
    filename: '',
    mediaType: 'application/json',
  };
}
