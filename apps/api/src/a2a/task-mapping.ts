import { Task, TaskState, type StreamResponse } from '@a2a-js/sdk';
import { toA2ATask, type TaskHandle } from '@longrun/core';

/**
 * The SDK's `Task` for a longrun handle: core's `toA2ATask` (the one mapping from a handle to an
 * A2A task, shared with the push notifications the webhook workers send) read with the SDK's own
 * JSON codec, so every call answers what a push notification carries for the same handle.
 * @example a2aTask(handle).status?.state // TaskState.TASK_STATE_WORKING
 */
export function a2aTask(handle: TaskHandle): Task {
  const task = Task.fromJSON(toA2ATask(handle));
  // The codec reads a `data: null` part (a job that returned null) as a part without content.
  for (const artifact of task.artifacts) {
    for (const part of artifact.parts) part.content ??= { $case: 'data', value: null };
  }
  return task;
}

/**
 * The task with its history as `historyLength` asks (A2A: the most recent messages, all when
 * unset, none for 0). The engine keeps no conversation: a task's messages are the agent's
 * current status message (the question, the progress, the outcome; core's `toA2ATask`).
 * @example withHistory(a2aTask(handle), 0).history // []
 */
export function withHistory(task: Task, historyLength: number | undefined): Task {
  if (historyLength === 0) task.history = [];
  else if (historyLength !== undefined) task.history = task.history.slice(-historyLength);
  return task;
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
