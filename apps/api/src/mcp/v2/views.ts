import type { TaskHandle } from '@longrun/core';
import { elicitationOf, inputKeyOf, statusMessageOf, toolResultOf } from '../task-views.js';

/** The Tasks V2 `Task` fields of a handle (the flat shape our HTTP handle already follows). */
export interface TaskV2 {
  [key: string]: unknown;
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  statusMessage: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
}

/**
 * A handle as a V2 `Task`. A failed job is `completed` (its tool result says `isError`): V2 keeps
 * `failed` for JSON-RPC errors, and a job's failure is the tool's, not the protocol's.
 */
export function taskV2(handle: TaskHandle): TaskV2 {
  return {
    taskId: handle.taskId,
    status: handle.status === 'failed' ? 'completed' : handle.status,
    statusMessage: statusMessageOf(handle),
    createdAt: handle.createdAt,
    lastUpdatedAt: handle.lastUpdatedAt,
    ttlMs: handle.ttlMs,
    pollIntervalMs: handle.pollIntervalMs,
  };
}

/** `tools/call`'s answer for a task: `resultType: "task"` and the flat task. */
export function createTaskResult(handle: TaskHandle): Record<string, unknown> {
  return { resultType: 'task', ...taskV2(handle) };
}

/**
 * `tasks/get`'s answer, a `DetailedTask`: the tool result once finished (itself a complete
 * result), the open input request as `inputRequests` (one `elicitation/create`, keyed so the key
 * is never reused over the task's life).
 */
export function detailedTask(handle: TaskHandle): Record<string, unknown> {
  const task = taskV2(handle);
  if (handle.status === 'completed' || handle.status === 'failed') {
    const result = toolResultOf({
      status: handle.status,
      result: handle.result,
      error: handle.error,
    });
    return { resultType: 'complete', ...task, result: { resultType: 'complete', ...result } };
  }
  if (handle.status === 'input_required') {
    const key = inputKeyOf(handle);
    const params = elicitationOf(handle);
    const inputRequests = key && params ? { [key]: { method: 'elicitation/create', params } } : {};
    return { resultType: 'complete', ...task, inputRequests };
  }
  return { resultType: 'complete', ...task };
}
