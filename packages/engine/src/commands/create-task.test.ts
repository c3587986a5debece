import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { TaskRecord } from '@longrun/core';
import { createItem, type CreateItem } from '../create-args.js';
import { indexPruneBound, taskKeys } from '../keys.js';
import { createTask } from './create-task.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const record = (keys = taskKeys(`test-${randomUUID()}`), extra: Partial<TaskRecord> = {}) => {
  const now = Date.now();
  const task: TaskRecord = {
    ...{ id: randomUUID(), tenant: 't', type: 'echo', status: 'working', statusMessage: 'queued' },
    ...{ createdAt: now, updatedAt: now, ttlMs: 60_000, input: { n: 1 } },
    ...{ cancelRequested: false, awaitingInput: false, inputs: [] },
    ...extra,
  };
  return { keys, task };
};

function create(keys: ReturnType<typeof taskKeys>, item: CreateItem, now = Date.now()) {
  const made = createItem(keys, item);
  return createTask.run(redis, {
    keys: { ...made.keys, openTenants: keys.openTenants },
    args: {
      ...made.args,
      now,
      pruneBound: indexPruneBound(Date.now() - 86_400_000),
      indexTtl: 120_000,
    },
  });
}

describe('create-task', () => {
  it('stores the record (ok), with its index entry, open entry and idempotency key', async () => {
    const { keys, task } = record();
    const idem = { key: `${keys.task('')}idem-${randomUUID()}`, value: `${task.id} body` };
    expect(await create(keys, { record: task, idempotency: idem })).toEqual({ created: true });
    expect(await redis.hget(keys.task(task.id), 'status')).toBe('working');
    expect(await redis.zscore(keys.openTasks('t'), task.id)).not.toBeNull();
    expect(await redis.zcard(keys.index('t'))).toBe(1);
    expect(await redis.get(idem.key)).toBe(idem.value);
    expect(await redis.zscore(keys.openTenants, 't')).toBe('0');
  });

  it("adds a tagged task to each tag's index (the same member), expiring with the task", async () => {
    const { keys, task } = record(undefined, { tags: ['nightly', 'ünï ✓'] });
    expect(await create(keys, { record: task })).toEqual({ created: true });
    const [member] = await redis.zrange(keys.index('t'), 0, -1);
    for (const tag of ['nightly', 'ünï ✓']) {
      expect(await redis.zrange(keys.tagIndex('t', tag), 0, -1)).toEqual([member]);
      const ttl = await redis.pttl(keys.tagIndex('t', tag));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    }
    expect(JSON.parse((await redis.hget(keys.task(task.id), 'tags')) ?? 'null')).toEqual(task.tags);
    // An untagged task touches no tag index.
    await create(keys, { record: record(keys).task });
    expect(await redis.zcard(keys.tagIndex('t', 'nightly'))).toBe(1);
  });

  it('gives a BullMQ priority under fair share (ok, priority): one step per task of a tenant', async () => {
    const { keys } = record();
    const fair = { key: `${keys.task('')}fair`, head: `${keys.task('')}head`, step: 2, offset: 0 };
    const outcomes = [];
    for (let i = 0; i < 3; i++)
      outcomes.push(await create(keys, { record: record(keys).task, fair }));
    expect(outcomes).toEqual([
      { created: true, priority: 2 },
      { created: true, priority: 4 },
      { created: true, priority: 6 },
    ]);
  });

  it('answers dup with the value the idempotency key holds, and stores nothing', async () => {
    const { keys, task } = record();
    const idem = { key: `${keys.task('')}idem`, value: `${task.id} body` };
    await create(keys, { record: task, idempotency: idem });
    const again = record(keys).task;
    expect(
      await create(keys, { record: again, idempotency: { ...idem, value: `${again.id} body` } }),
    ).toEqual({
      created: false,
      idempotencyValue: idem.value,
    });
    expect(await redis.exists(keys.task(again.id))).toBe(0);
    // A replay of the same body marks the untouched task (discard-task then keeps it).
    expect(await redis.hget(keys.task(task.id), 'replayed')).toBe('1');
  });

  it('answers full at the open-task cap, counting the open tasks', async () => {
    const { keys, task } = record();
    expect(await create(keys, { record: task, maxOpenTasks: 1 })).toEqual({ created: true });
    const next = record(keys).task;
    expect(await create(keys, { record: next, maxOpenTasks: 1 })).toEqual({
      created: false,
      full: true,
      openTasks: 1,
    });
    expect(await redis.exists(keys.task(next.id))).toBe(0);
  });

  it('answers over past the storage budget, with the bytes used and when to retry', async () => {
    const { keys, task } = record();
    expect(await create(keys, { record: task, maxBytes: 1000 })).toEqual({ created: true });
    const used = Number(await redis.hget(keys.usage('t'), '#total'));
    expect(used).toBeGreaterThan(100);
    const now = Date.now();
    const outcome = await create(keys, { record: record(keys).task, maxBytes: used + 10 }, now);
    expect(outcome).toEqual({
      created: false,
      over: true,
      usedBytes: used,
      retryAfterMs: expect.any(Number),
    });
    if (!('retryAfterMs' in outcome)) throw new Error('not over');
    // The first task's bytes come back with its expiry bucket: its ttl (60 s) from its creation,
    // and at most the bucket's second more (includes/usage).
    expect(outcome.retryAfterMs).toBeGreaterThan(50_000);
    expect(outcome.retryAfterMs).toBeLessThanOrEqual(61_000);
  });

  it('writes nothing when its record exists (the same create, sent again after a reconnect)', async () => {
    const { keys, task } = record();
    expect(await create(keys, { record: task, maxBytes: 1_000_000 })).toEqual({ created: true });
    await redis.hset(keys.task(task.id), 'status', 'completed', 'seq', '2');
    const usage = await redis.hgetall(keys.usage('t'));
    const index = await redis.zrange(keys.index('t'), 0, -1);
    expect(await create(keys, { record: task, maxBytes: 1_000_000 })).toEqual({ created: true });
    expect(await redis.hmget(keys.task(task.id), 'status', 'seq')).toEqual(['completed', '2']);
    expect(await redis.hgetall(keys.usage('t'))).toEqual(usage);
    expect(await redis.zrange(keys.index('t'), 0, -1)).toEqual(index);
  });

  it('answers gone for the tick of a schedule that was deleted, and makes it while it exists', async () => {
    const { keys, task } = record(undefined, { scheduleId: 's1' });
    expect(await create(keys, { record: task })).toEqual({ created: false, gone: true });
    await redis.hset(keys.schedule('s1'), 'tenant', 't');
    expect(await create(keys, { record: task })).toEqual({ created: true });
  });
});
