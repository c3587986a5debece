import { isTerminal, type TaskHandle } from '@longrun/core';
import { statusMessageOf, type ToolResult } from './task-views.js';

/**
 * What the follow tools (and a long tool called without Tasks) answer: the task's handle as a
 * tool result a model can read and act on, for clients that do not implement MCP Tasks
 * (issue 32). The text says what to call next; `structuredContent` carries the same facts.
 */

/** The follow tools' names (reserved: no job type may start with `longrun_`). */
export const FOLLOW = {
  get: 'longrun_get_task',
  answer: 'longrun_answer_task',
  cancel: 'longrun_cancel_task',
  list: 'longrun_list_tasks',
} as const;

/** The handle's fields a follow tool shows (`structuredContent`). */
export interface FollowView {
  [key: string]: unknown;
  taskId: string;
  type: string;
  status: TaskHandle['status'];
  statusMessage: string;
  pollIntervalMs: number;
  progress?: TaskHandle['progress'];
  result?: unknown;
  error?: TaskHandle['error'];
  inputRequest?: TaskHandle['inputRequest'];
}

/** The handle as `structuredContent`: a failed task's message is its `statusMessage`. */
export function followView(handle: TaskHandle): FollowView {
  return {
    taskId: handle.taskId,
    type: handle.type,
    status: handle.status,
    statusMessage: statusMessageOf(handle),
    pollIntervalMs: handle.pollIntervalMs,
    ...(handle.progress === undefined ? {} : { progress: handle.progress }),
    ...(handle.status === 'completed' ? { result: handle.result ?? null } : {}),
    ...(handle.error === undefined ? {} : { error: handle.error }),
    ...(handle.status === 'input_required' && handle.inputRequest
      ? { inputRequest: handle.inputRequest }
      : {}),
  };
}

/**
 * The handle as a tool result: a sentence on where the task is and what to call next, and the
 * view. `started` says it was just created (a long tool's answer to a client without Tasks).
 * @example handleResult(handle, { started: true }).structuredContent.taskId
 */
export function handleResult(handle: TaskHandle, opts: { started?: boolean } = {}): ToolResult {
  const view = followView(handle);
  return { content: [{ type: 'text', text: describeHandle(view, opts) }], structuredContent: view };
}

function describeHandle(view: FollowView, opts: { started?: boolean }): string {
  const task = `Task ${view.taskId} (${view.type})`;
  const follow =
    `Call ${FOLLOW.get} with {"taskId":"${view.taskId}","waitSeconds":30} to wait for it to ` +
    `change or finish (or ${FOLLOW.cancel} to stop it).`;
  switch (view.status) {
    case 'completed':
      return `${task} completed.\nResult: ${JSON.stringify(view.result ?? null)}`;
    case 'failed':
      return `${task} failed: ${view.statusMessage}\nError: ${JSON.stringify(view.error ?? null)}`;
    case 'cancelled':
      return `${task} was cancelled.`;
    case 'input_required': {
      const ask = view.inputRequest;
      return (
        `${task} waits for input: ${ask?.message ?? view.statusMessage}\n` +
        `Answer with ${FOLLOW.answer} {"taskId":"${view.taskId}","input":{…}}, the input ` +
        `matching this JSON Schema: ${JSON.stringify(ask?.schema ?? {})}`
      );
    }
    default:
      return opts.started
        ? `Started task ${view.taskId} (${view.type}); it runs in the background.\n${follow}`
        : `${task} is working: ${view.statusMessage}.\n${follow}`;
  }
}

/** Whether a follow-up read can change anything (the task may still move). */
export function mayChange(handle: Pick<TaskHandle, 'status'>): boolean {
  return !isTerminal(handle.status);
}
