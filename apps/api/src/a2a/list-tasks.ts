import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import { TaskState } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { TaskStatus } from '@longrun/core';
import type { TaskEngine } from '@longrun/engine';
import { invalidProblem } from '../http/outcomes.js';
import { describe } from './errors.js';
import { a2aTask, withHistory } from './task-mapping.js';

/** A2A's default and largest `ListTasks` page. */
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

/** The engine status whose tasks can map to an A2A state (a list filter); REJECTED: none. */
const STATUS_OF_STATE = new Map<TaskState, TaskStatus>([
  [TaskState.TASK_STATE_SUBMITTED, 'working'],
  [TaskState.TASK_STATE_WORKING, 'working'],
  [TaskState.TASK_STATE_INPUT_REQUIRED, 'input_required'],
  [TaskState.TASK_STATE_COMPLETED, 'completed'],
  [TaskState.TASK_STATE_FAILED, 'failed'],
  [TaskState.TASK_STATE_CANCELED, 'cancelled'],
]);

/**
 * The tenant's tasks, newest first, a page of the engine's list: `contextId` (the client's, or a
 * task's own id when it gave none), `status` and `statusTimestampAfter` filter the page,
 * `pageToken` is the engine's cursor. `totalSize` counts the page only (the engine's index does not count).
 * @example await listTasks(engine, tenant, { pageSize: 10 })
 */
export async function listTasks(
  engine: TaskEngine,
  tenant: string,
  params: ListTasksRequest,
): Promise<ListTasksResponse> {
  const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw new RequestMalformedError(`pageSize must be between 1 and ${MAX_PAGE_SIZE}`);
  }
  if (params.historyLength !== undefined && !(params.historyLength >= 0)) {
    throw new RequestMalformedError('historyLength must be 0 or more');
  }
  const after = params.statusTimestampAfter ? rfc3339(params.statusTimestampAfter) : NaN;
  if (params.statusTimestampAfter && Number.isNaN(after)) {
    throw new RequestMalformedError(
      'statusTimestampAfter must be an RFC 3339 time, e.g. 2026-01-02T03:04:05Z',
    );
  }
  const state = params.status ?? TaskState.TASK_STATE_UNSPECIFIED;
  if (!Object.values(TaskState).includes(state) || state < 0) {
    throw new RequestMalformedError('status must be one of the TaskState values');
  }
  const status = STATUS_OF_STATE.get(state);
  const filtered = state !== TaskState.TASK_STATE_UNSPECIFIED;
  const keep = (task: Task) =>
    (!params.contextId || task.contextId === params.contextId) &&
    (!filtered || task.status?.state === state) &&
    (Number.isNaN(after) || Date.parse(task.status?.timestamp ?? '') >= after);
  const page = (tasks: Task[], nextPageToken: string): ListTasksResponse => {
    const kept = tasks.filter(keep).map((task) => withHistory(task, params.historyLength));
    return { tasks: kept, nextPageToken, pageSize, totalSize: kept.length };
  };
  if (filtered && status === undefined) return page([], '');
  const outcome = await engine.list(tenant, {
    limit: String(pageSize),
    ...(status ? { status } : {}),
    ...(params.pageToken ? { cursor: params.pageToken } : {}),
    ...(params.includeArtifacts ? { view: 'full' } : {}),
  });
  if (outcome.kind === 'invalid')
    throw new RequestMalformedError(describe(invalidProblem(outcome)));
  // Without includeArtifacts a task is listed without its artifacts (A2A's default).
  const listed = outcome.tasks.map((t) => a2aTask(t));
  if (!params.includeArtifacts) for (const task of listed) task.artifacts = [];
  return page(listed, outcome.nextCursor ?? '');
}

/** RFC 3339 `date-time` (A2A's timestamps): a full date, time and offset; else NaN. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
function rfc3339(value: string): number {
  return RFC3339.test(value) ? Date.parse(value.replace(' ', 'T')) : NaN;
}
