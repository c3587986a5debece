import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { TaskRecord } from '@longrun/core';
import { TaskStore, TransitionBatch } from '@longrun/queue';
import { uniquePrefix } from './helpers/service.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

function record(): TaskRecord {
  const now = Date.now();
  return {
    id: randomUUID(),
    tenant: 't',
    type: 'echo',
    status: 'working',
    statusMessage: 'queued',
    createdAt: now,
    updatedAt: now,
    ttlMs: 60_000,
    input: {},
    cancelRequested: false,
    awaitingInput: false,
    inputs: [],
  };
}

describe('TaskStore event list', () => {
  it('numbers events 1, 2, … and reads after any id, also once the oldest were trimmed', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const task = record();
    await store.create(task);
    for (let i = 1; i <= 1004; i++) await store.transition(task.id, { progress: i });
    // 1 (create) + 1 004 progress events = 1 005; the list keeps the newest 1 000: 6 … 1 005.
    expect((await store.lastEvent(task.id))?.id).toBe('1005');
    const oldest = await store.events(task.id, undefined, 3);
    expect(oldest.map((e) => e.id)).toEqual(['6', '7', '8']);
    expect(oldest[0]?.progress).toBe(5);
    expect((await store.events(task.id, '0', 1))[0]?.id).toBe('6'); // trimmed ones are skipped
    expect((await store.events(task.id, '1002')).map((e) => e.id)).toEqual([
      '1003',
      '1004',
      '1005',
    ]);
    expect(await store.events(task.id, '1005')).toEqual([]);
    expect((await store.event(task.id, '500'))?.progress).toBe(499);
    expect(await store.event(task.id, '3')).toBeNull();
    expect(await redis.pttl(store.keys.events(task.id))).toBeGreaterThan(50_000); // expires with the task
  });

  it('keeps a small task small: the event list costs far less than a stream node', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const task = record();
    await store.create(task);
    await store.transition(task.id, { statusMessage: 'running' });
    await store.transition(task.id, {
      status: 'completed',
      statusMessage: 'completed',
      result: { ok: true },
    });
    const bytes = Number(await redis.call('MEMORY', 'USAGE', store.keys.events(task.id)));
    expect(bytes).toBeLessThan(1024);
    const events = await store.events(task.id, undefined);
    expect(events.map((e) => [e.id, e.status])).toEqual([
      ['1', 'working'],
      ['2', 'working'],
      ['3', 'completed'],
    ]);
  });
});

describe('TaskStore.transitionMany and TransitionBatch', () => {
  it('applies several guarded transitions in one call, each with its own outcome', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const [a, b, c] = [record(), record(), record()];
    await store.create(a);
    await store.create(b);
    await store.transition(b.id, { status: 'cancelled', statusMessage: 'cancelled by request' });
    const outcomes = await store.transitionMany([
      { id: a.id, update: { status: 'completed', statusMessage: 'completed', result: { x: 1 } } },
      { id: b.id, update: { status: 'completed', statusMessage: 'completed', result: 2 } },
      { id: c.id, update: { status: 'completed', statusMessage: 'completed' } }, // never created
      { id: a.id, update: { progress: 5 }, requiredStatus: 'working' }, // a is terminal by now
    ]);
    expect(outcomes).toEqual([
      { ok: true, previous: 'working', eventId: '2' },
      { ok: false, reason: 'refused', current: 'cancelled' },
      { ok: false, reason: 'missing' },
      { ok: false, reason: 'refused', current: 'completed' },
    ]);
    expect((await store.get(a.id))?.result).toEqual({ x: 1 });
    expect((await store.get(b.id))?.status).toBe('cancelled');
    expect((await store.get(b.id))?.result).toBeUndefined();
    expect(await redis.exists(store.keys.task(c.id))).toBe(0);
    expect((await store.lastEvent(a.id))?.status).toBe('completed');
  });

  it('sends the transitions asked for in one turn together, a lone one alone', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const calls: number[] = [];
    const many = store.transitionMany.bind(store);
    // The real store, counted: how many transitions travel in each call.
    store.transitionMany = (items) => {
      calls.push(items.length);
      return many(items);
    };
    const batch = new TransitionBatch(store);
    const tasks = Array.from({ length: 5 }, record);
    for (const t of tasks) await store.create(t);
    const outcomes = await Promise.all(
      tasks.map((t) => batch.transition(t.id, { status: 'completed', statusMessage: 'completed' })),
    );
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(calls).toEqual([5]);
    const lone = record();
    await store.create(lone);
    expect((await batch.transition(lone.id, { progress: 1 })).ok).toBe(true);
    expect(calls).toEqual([5]); // a single transition goes out as the plain script
    for (const t of tasks) expect((await store.get(t.id))?.status).toBe('completed');
  });
});

describe('TransitionBatch when the batched call fails', () => {
  it('sends each transition again on its own, so one bad task fails alone', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const batch = new TransitionBatch(store);
    const [a, b] = [record(), record()];
    await store.create(a);
    await store.create(b);
    const broken = randomUUID();
    await redis.set(store.keys.task(broken), 'not a hash', 'EX', 60); // WRONGTYPE for the script
    const settled = await Promise.allSettled(
      [a.id, broken, b.id].map((id) =>
        batch.transition(id, { status: 'completed', statusMessage: 'completed' }),
      ),
    );
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await store.get(a.id))?.status).toBe('completed');
    expect((await store.get(b.id))?.status).toBe('completed');
  });
});
