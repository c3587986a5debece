import { TaskState, type Task } from '@a2a-js/sdk';
import type { TaskHandle } from '@longrun/core';
import { describe, expect, it } from 'vitest';
import { interrupted, streamUpdates, toA2ATask } from './task-mapping.js';

const base: TaskHandle = {
  resultType: 'task',
  taskId: '8b7c2f0e-3f6a-4d6e-9a55-0c7f4f1d2b11',
  type: 'sleep',
  status: 'working',
  statusMessage: 'queued',
  createdAt: '2026-11-30T10:30:00.000Z',
  lastUpdatedAt: '2026-11-30T10:30:01.000Z',
  ttlMs: 86_400_000,
  pollIntervalMs: 1000,
};
const handle = (fields: Partial<TaskHandle>): TaskHandle => ({ ...base, ...fields });
const parts = (task: Task) =>
  (task.status?.message?.parts ?? []).map((p) =>
    p.content?.$case === 'text' ? p.content.value : p.content?.value,
  );

describe('toA2ATask', () => {
  it.each([
    ['queued', undefined, TaskState.TASK_STATE_SUBMITTED],
    [
      'queued: waiting for a worker that serves "sleep" (none is running)',
      undefined,
      TaskState.TASK_STATE_SUBMITTED,
    ],
    ['scheduled', undefined, TaskState.TASK_STATE_SUBMITTED],
    ['queued', 40, TaskState.TASK_STATE_WORKING],
    ['running', undefined, TaskState.TASK_STATE_WORKING],
    ['input received', undefined, TaskState.TASK_STATE_WORKING],
    ['attempt 1 failed; retrying', undefined, TaskState.TASK_STATE_WORKING],
  ])('working with "%s" and progress %s is %s', (statusMessage, progress, state) => {
    const task = toA2ATask(
      handle({ statusMessage, ...(progress === undefined ? {} : { progress }) }),
    );
    expect(task.status?.state).toBe(state);
    expect(parts(task)).toEqual(
      progress === undefined ? [statusMessage] : [statusMessage, { progress }],
    );
    expect(interrupted(task)).toBe(false);
  });

  it('input_required carries the question as text and the input request as data', () => {
    const inputRequest = { message: 'Ship it?', schema: { type: 'object' } };
    const task = toA2ATask(
      handle({ status: 'input_required', statusMessage: 'Ship it?', inputRequest }),
    );
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(parts(task)).toEqual(['Ship it?', { inputRequest }]);
    expect(interrupted(task)).toBe(true);
  });

  it('completed has the artifact `result`; failed the error; cancelled its message', () => {
    const done = toA2ATask(
      handle({ status: 'completed', statusMessage: 'completed', result: [1, 2] }),
    );
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts).toMatchObject([
      {
        artifactId: 'result',
        name: 'result',
        parts: [{ content: { $case: 'data', value: [1, 2] } }],
      },
    ]);
    const error = { message: 'disk on fire' };
    const failed = toA2ATask(handle({ status: 'failed', statusMessage: 'failed', error }));
    expect(failed.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(parts(failed)).toEqual(['disk on fire', { error }]);
    expect(failed.artifacts).toEqual([]);
    const cancelled = toA2ATask(
      handle({ status: 'cancelled', statusMessage: 'cancelled by request' }),
    );
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(parts(cancelled)).toEqual(['cancelled by request']);
  });

  it('the task id is the longrun id, and so is the context; the same handle maps the same', () => {
    const task = toA2ATask(base);
    expect(task).toMatchObject({ id: base.taskId, contextId: base.taskId, history: [] });
    expect(toA2ATask(base)).toEqual(task);
  });
});

describe('streamUpdates', () => {
  it('sends a new artifact before the status it came with', () => {
    const before = toA2ATask(handle({ statusMessage: 'running' }));
    const after = toA2ATask(handle({ status: 'completed', statusMessage: 'completed', result: 1 }));
    expect(streamUpdates(before, after).map((u) => u.payload?.$case)).toEqual([
      'artifactUpdate',
      'statusUpdate',
    ]);
    expect(streamUpdates(after, after).map((u) => u.payload?.$case)).toEqual(['statusUpdate']);
  });
});
