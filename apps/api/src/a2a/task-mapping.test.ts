import { Task, TaskState } from '@a2a-js/sdk';
import { toA2ATask, type TaskHandle } from '@longrun/core';
import { describe, expect, it } from 'vitest';
import { a2aTask, interrupted, streamUpdates } from './task-mapping.js';

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

/** One handle of each kind the mapping tells apart. */
const handles: [string, TaskHandle][] = [
  ['submitted', base],
  ['working with progress', handle({ statusMessage: 'running', progress: { done: 3 } })],
  [
    'input_required',
    handle({
      status: 'input_required',
      statusMessage: 'Ship it?',
      inputRequest: { message: 'Ship it?', schema: { type: 'object' } },
    }),
  ],
  ['completed', handle({ status: 'completed', statusMessage: 'completed', result: { a: [1] } })],
  [
    'completed with null',
    handle({ status: 'completed', statusMessage: 'completed', result: null }),
  ],
  [
    'failed',
    handle({ status: 'failed', statusMessage: 'failed', error: { message: 'disk on fire' } }),
  ],
  ['cancelled', handle({ status: 'cancelled', statusMessage: 'cancelled by request' })],
];

describe('a2aTask', () => {
  it.each(handles)(
    '%s: the SDK writes exactly what core maps (what push notifications carry)',
    (_kind, h) => {
      expect(Task.toJSON(a2aTask(h))).toEqual(toA2ATask(h));
    },
  );

  it('reads states, parts and the result artifact into the SDK’s shapes', () => {
    const working = a2aTask(handle({ statusMessage: 'running', progress: 40 }));
    expect(working.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(parts(working)).toEqual(['running', { progress: 40 }]);
    expect(interrupted(working)).toBe(false);
    const asking = a2aTask(handles[2]![1]);
    expect(asking.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(interrupted(asking)).toBe(true);
    const done = a2aTask(handles[3]![1]);
    expect(done.artifacts).toMatchObject([
      { artifactId: 'result', parts: [{ content: { $case: 'data', value: { a: [1] } } }] },
    ]);
    expect(a2aTask(handles[4]![1]).artifacts[0]?.parts[0]?.content).toEqual({
      $case: 'data',
      value: null,
    });
    const plain = a2aTask(base);
    expect(plain).toMatchObject({ id: base.taskId, contextId: base.taskId });
    expect(plain.history).toEqual([plain.status?.message]);
  });
});

describe('streamUpdates', () => {
  it('sends a new artifact before the status it came with', () => {
    const before = a2aTask(handle({ statusMessage: 'running' }));
    const after = a2aTask(handle({ status: 'completed', statusMessage: 'completed', result: 1 }));
    expect(streamUpdates(before, after).map((u) => u.payload?.$case)).toEqual([
      'artifactUpdate',
      'statusUpdate',
    ]);
    expect(streamUpdates(after, after).map((u) => u.payload?.$case)).toEqual(['statusUpdate']);
  });
});
