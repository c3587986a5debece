import { describe, expect, it } from 'vitest';
import type { TaskHandle } from '@longrun/core';
import {
  clampTtl,
  elicitationOf,
  inputKeyOf,
  statusMessageOf,
  toolResultOf,
} from './task-views.js';

const handle = (extra: Partial<TaskHandle>): TaskHandle => ({
  resultType: 'task',
  taskId: '786512e2-9e0d-44bd-8f29-789f320fe840',
  type: 'approval',
  status: 'working',
  statusMessage: 'running',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastUpdatedAt: '2026-01-01T00:00:01.000Z',
  ttlMs: 60_000,
  pollIntervalMs: 1000,
  ...extra,
});

describe('task views', () => {
  it("a failed task's statusMessage is its error's message", () => {
    expect(statusMessageOf(handle({ status: 'failed', error: { message: 'boom' } }))).toBe('boom');
    expect(statusMessageOf(handle({}))).toBe('running');
  });

  it('tool results: an object result is structured too; failures are isError', () => {
    expect(toolResultOf({ status: 'completed', result: { n: 1 } })).toEqual({
      content: [{ type: 'text', text: '{"n":1}' }],
      structuredContent: { n: 1 },
    });
    expect(toolResultOf({ status: 'completed', result: 'done' })).toEqual({
      content: [{ type: 'text', text: 'done' }],
    });
    expect(toolResultOf({ status: 'completed' })).toEqual({
      content: [{ type: 'text', text: 'null' }],
    });
    expect(toolResultOf({ status: 'failed', error: { message: 'boom' } })).toMatchObject({
      content: [{ type: 'text', text: 'boom' }],
      isError: true,
    });
  });

  it("an input request's key is stable while open and differs for the next one", () => {
    const waiting = handle({
      status: 'input_required',
      inputRequest: { message: 'ok?', schema: { $schema: 'x', type: 'object', properties: {} } },
    });
    expect(inputKeyOf(waiting)).toBe(inputKeyOf({ ...waiting }));
    expect(inputKeyOf({ ...waiting, lastUpdatedAt: '2026-01-01T00:00:02.000Z' })).not.toBe(
      inputKeyOf(waiting),
    );
    expect(inputKeyOf(handle({}))).toBeNull();
    expect(elicitationOf(waiting)).toEqual({
      mode: 'form',
      message: 'ok?',
      requestedSchema: { type: 'object', properties: {} },
    });
  });

  it('clamps requested ttls to what the engine accepts', () => {
    expect(clampTtl(undefined, 10_000)).toBeUndefined();
    expect(clampTtl(null, 10_000)).toBe(10_000);
    expect(clampTtl(50_000, 10_000)).toBe(10_000);
    expect(clampTtl(1, 10_000)).toBe(1000);
    expect(clampTtl(5_000.4, 10_000)).toBe(5_000);
  });
});
