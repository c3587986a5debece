import { describe, expect, it } from 'vitest';
import { taskHandleSchema } from './schemas.js';
import { handleAt, toHandle, type HandleFields } from './task-record.js';

// A durable task's steps on its handle and on its events (issue 40): the handle shows the newest
// steps and the count, a sleep in progress as `waiting` until its end; an event shows only the
// step it changed.

const view: HandleFields = {
  id: 'a',
  tenant: 't',
  type: 'durable',
  status: 'working',
  statusMessage: 'sleeping until …',
  createdAt: 1000,
  updatedAt: 2000,
  ttlMs: 60_000,
  stepCount: 2,
  steps: [
    { name: 's1', status: 'completed', endedAt: 1500 },
    { name: '$sleep:1', status: 'waiting', until: 9000 },
  ],
};

describe('steps on handles and events', () => {
  it('a handle shows the steps (a sleep waiting until its end) and stepCount', () => {
    const handle = toHandle(view, 5000);
    expect(handle.stepCount).toBe(2);
    expect(handle.steps).toEqual([
      { name: 's1', status: 'completed', endedAt: new Date(1500).toISOString() },
      { name: '$sleep:1', status: 'waiting', until: new Date(9000).toISOString() },
    ]);
    expect(taskHandleSchema.parse(handle)).toEqual(handle);
  });

  it('an event shows the step it changed, not the list', () => {
    const step = { name: '$sleep:1', status: 'completed' as const, endedAt: 9100 };
    const at = handleAt(
      view,
      { id: '5', status: 'working', statusMessage: '$sleep:1 ended', updatedAt: 9100, step },
      5000,
    );
    expect(at).not.toHaveProperty('steps');
    expect(at.step).toEqual({ ...step, endedAt: new Date(9100).toISOString() });
    expect(at.stepCount).toBe(2);
    expect(taskHandleSchema.parse(at)).toEqual(at);
    const plain = handleAt(
      view,
      { id: '4', status: 'working', statusMessage: 'x', updatedAt: 3 },
      1,
    );
    expect(plain).not.toHaveProperty('step');
    expect(view.steps).toHaveLength(2); // the record read is left as it was
  });
});
