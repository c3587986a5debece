import { describe, expect, it } from 'vitest';
import { toA2ATask, type A2APart, type A2ATask } from './a2a-task.js';
import type { TaskHandle } from './schemas.js';

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
const contents = (parts: A2APart[]) => parts.map((p) => ('text' in p ? p.text : p.data));
const parts = (task: A2ATask) => contents(task.status.message.parts);

describe('toA2ATask', () => {
  it.each([
    ['queued', undefined, 'TASK_STATE_SUBMITTED'],
    [
      'queued: waiting for a worker that serves "sleep" (none is running)',
      undefined,
      'TASK_STATE_SUBMITTED',
    ],
    ['scheduled', undefined, 'TASK_STATE_SUBMITTED'],
    ['queued', 40, 'TASK_STATE_WORKING'],
    ['running', undefined, 'TASK_STATE_WORKING'],
    ['input received', undefined, 'TASK_STATE_WORKING'],
    ['attempt 1 failed; retrying', undefined, 'TASK_STATE_WORKING'],
  ])('working with "%s" and progress %s is %s', (statusMessage, progress, state) => {
    const task = toA2ATask(
      handle({ statusMessage, ...(progress === undefined ? {} : { progress }) }),
    );
    expect(task.status.state).toBe(state);
    expect(parts(task)).toEqual(
      progress === undefined ? [statusMessage] : [statusMessage, { progress }],
    );
    expect(task).not.toHaveProperty('artifacts');
  });

  it('input_required carries the question as text and the input request as data', () => {
    const inputRequest = { message: 'Ship it?', schema: { type: 'object' } };
    const task = toA2ATask(
      handle({ status: 'input_required', statusMessage: 'Ship it?', inputRequest }),
    );
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(parts(task)).toEqual(['Ship it?', { inputRequest }]);
  });

  it('completed has the artifact `result`; failed the error; cancelled its message', () => {
    const done = toA2ATask(
      handle({ status: 'completed', statusMessage: 'completed', result: [1, 2] }),
    );
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.artifacts).toEqual([
      {
        artifactId: 'result',
        name: 'result',
        description: 'The value the job returned',
        parts: [{ data: [1, 2], mediaType: 'application/json' }],
      },
    ]);
    const nothing = toA2ATask(handle({ status: 'completed', statusMessage: 'completed' }));
    expect(contents(nothing.artifacts?.[0]?.parts ?? [])).toEqual([null]);
    const error = { message: 'disk on fire' };
    const failed = toA2ATask(handle({ status: 'failed', statusMessage: 'failed', error }));
    expect(failed.status.state).toBe('TASK_STATE_FAILED');
    expect(parts(failed)).toEqual(['disk on fire', { error }]);
    expect(failed).not.toHaveProperty('artifacts');
    const cancelled = toA2ATask(
      handle({ status: 'cancelled', statusMessage: 'cancelled by request' }),
    );
    expect(cancelled.status.state).toBe('TASK_STATE_CANCELED');
    expect(parts(cancelled)).toEqual(['cancelled by request']);
  });

  it('is the protocol JSON: the task id is the longrun id and the context, states and roles by name', () => {
    const task = toA2ATask(handle({ scheduleId: 'b0d5f7c4-6a8e-4f3b-9c21-7e5d3a1f0b42' }));
    expect(task).toEqual({
      id: base.taskId,
      contextId: base.taskId,
      status: {
        state: 'TASK_STATE_SUBMITTED',
        message: {
          messageId: `${base.taskId}@${base.lastUpdatedAt}`,
          contextId: base.taskId,
          taskId: base.taskId,
          role: 'ROLE_AGENT',
          parts: [{ text: 'queued', mediaType: 'text/plain' }],
        },
        timestamp: base.lastUpdatedAt,
      },
      metadata: {
        type: 'sleep',
        statusMessage: 'queued',
        createdAt: base.createdAt,
        scheduleId: 'b0d5f7c4-6a8e-4f3b-9c21-7e5d3a1f0b42',
      },
      // The task's messages: its status message (the engine keeps no conversation).
      history: [task.status.message],
    });
    // The same handle maps the same, and survives JSON unchanged (a push notification's body).
    expect(toA2ATask(base)).toEqual(toA2ATask(base));
    expect(JSON.parse(JSON.stringify(task))).toEqual(task);
  });
});
