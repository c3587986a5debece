import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Problem } from './problem.js';
import { retryAfterSeconds } from './retry-after.js';
import {
  createJobRequestSchema,
  fieldErrors,
  idempotencyKeySchema,
  isTaskId,
  listJobsQuerySchema,
  taskIdSchema,
} from './schemas.js';
import { toHandle, type TaskRecord } from './task-record.js';

const create = createJobRequestSchema(60_000);

describe('createJobRequestSchema', () => {
  it('accepts a minimal body and defaults input to {}', () => {
    expect(create.parse({ type: 'echo' })).toEqual({ type: 'echo', input: {} });
  });

  it('rejects unknown top-level fields, naming them', () => {
    const result = create.safeParse({ type: 'echo', input: {}, ttl: 5 });
    expect(result.success).toBe(false);
    expect(fieldErrors(result.error!)).toEqual([{ path: 'ttl', message: 'Unknown field: ttl' }]);
  });

  it.each([999, 60_001, 1500.5, '2000'])('rejects ttlMs %p without clamping', (ttlMs) => {
    expect(create.safeParse({ type: 'echo', ttlMs }).success).toBe(false);
  });

  it.each([1000, 60_000])('accepts ttlMs %p at the bounds', (ttlMs) => {
    expect(create.parse({ type: 'echo', ttlMs }).ttlMs).toBe(ttlMs);
  });

  it('requires input to be an object', () => {
    const result = create.safeParse({ type: 'echo', input: [1] });
    expect(fieldErrors(result.error!)[0]?.path).toBe('input');
  });
});

describe('listJobsQuerySchema', () => {
  it('coerces limit and applies the default', () => {
    expect(listJobsQuerySchema.parse({ limit: '5' }).limit).toBe(5);
    expect(listJobsQuerySchema.parse({}).limit).toBe(20);
  });
  it.each([
    { limit: '0' },
    { limit: '101' },
    { limit: 'x' },
    { limit: '0x10' },
    { limit: '1e1' },
    { status: 'done' },
    { cursor: '../' },
    { foo: '1' },
  ])('rejects %o', (query) => {
    expect(listJobsQuerySchema.safeParse(query).success).toBe(false);
  });
});

describe('idempotencyKeySchema', () => {
  it.each(['', 'a b', 'x'.repeat(256), 'é'])('rejects %p', (key) => {
    expect(idempotencyKeySchema.safeParse(key).success).toBe(false);
  });
  it('accepts a UUID', () => {
    expect(idempotencyKeySchema.parse('0b0e8b3c-0000-4000-8000-000000000000')).toBeTruthy();
  });
});

describe('fieldErrors', () => {
  it('prefixes nested paths with the root', () => {
    const result = z.object({ ms: z.int() }).safeParse({ ms: 'x' });
    expect(fieldErrors(result.error!, 'input')[0]?.path).toBe('input.ms');
  });
});

describe('retryAfterSeconds', () => {
  it.each([
    [1, 1],
    [999, 1],
    [1000, 1],
    [1001, 2],
    [5000, 5],
  ])('%i ms → %i s', (ms, s) => {
    expect(retryAfterSeconds(ms)).toBe(s);
  });
});

describe('Problem', () => {
  it('serialises as RFC 9457', () => {
    const p = new Problem({
      status: 409,
      title: 'Conflict',
      code: 'terminal',
      detail: 'd',
      extra: { taskStatus: 'failed' },
    });
    expect(p.toJSON('/v1/jobs/x')).toEqual({
      type: '/problems/terminal',
      title: 'Conflict',
      status: 409,
      detail: 'd',
      instance: '/v1/jobs/x',
      taskStatus: 'failed',
    });
  });
});

describe('toHandle', () => {
  const record: TaskRecord = {
    id: 'id-1',
    tenant: 't',
    type: 'echo',
    status: 'working',
    statusMessage: 'queued',
    createdAt: Date.UTC(2025, 10, 25, 10, 30),
    updatedAt: Date.UTC(2025, 10, 25, 10, 40),
    ttlMs: 60_000,
    input: {},
    cancelRequested: false,
    awaitingInput: false,
    inputs: [],
    result: { secret: 'not yet' },
  };

  it('has the seed artifact shape and hides result until completed', () => {
    expect(toHandle(record, 5000)).toEqual({
      resultType: 'task',
      taskId: 'id-1',
      type: 'echo',
      status: 'working',
      statusMessage: 'queued',
      createdAt: '2025-11-25T10:30:00.000Z',
      lastUpdatedAt: '2025-11-25T10:40:00.000Z',
      ttlMs: 60_000,
      pollIntervalMs: 5000,
    });
  });

  it('shows result when completed and error when failed', () => {
    expect(toHandle({ ...record, status: 'completed' }, 1).result).toEqual({ secret: 'not yet' });
    const failed = toHandle({ ...record, status: 'failed', error: { message: 'boom' } }, 1);
    expect(failed.error).toEqual({ message: 'boom' });
    expect(failed.result).toBeUndefined();
  });
});

describe('isTaskId', () => {
  it('agrees with taskIdSchema on ids, near-ids and junk', () => {
    const agree = (id: string) => expect(isTaskId(id)).toBe(taskIdSchema.safeParse(id).success);
    for (let i = 0; i < 100; i++) {
      const id = randomUUID();
      agree(id);
      expect(isTaskId(id)).toBe(true);
      agree(id.toUpperCase());
      agree(id.slice(1));
      agree(`${id}x`);
      agree(` ${id}`);
      agree(`${id}\n`);
      agree(id.replace('-', ''));
    }
    fc.assert(
      fc.property(fc.uuid(), (id) => {
        agree(id);
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (id) => {
        agree(id);
      }),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (id) => {
        agree(id);
      }),
    );
  });
});
