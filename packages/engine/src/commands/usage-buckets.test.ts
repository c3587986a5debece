import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { TaskRecord } from '@longrun/core';
import { createItem } from '../create-args.js';
import { indexPruneBound, taskKeys } from '../keys.js';
import { completeMany } from './complete-many.js';
import { createMany } from './create-many.js';
import { forgetTask } from './forget-task.js';
import { tenantUsage } from './tenant-usage.js';
import { transitionTask } from './transition-task.js';

// A storage budget counts a task's bytes under its expiry bucket ('@<n>': the tasks expiring
// in the second up to n s) and in its record ('ub'), with no entry of its own (issue 28,
// lua/includes/usage.lua). The per-task entries an older version made are the other tests'.
const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const BUCKET_MS = 1_000;
// Now, placed 300 ms into a bucket's span, so a task's expiry is never a bucket's end.
const CREATED = Math.floor(Date.now() / 1_000) * 1_000 + 300;
const bucketOf = (expiresAt: number) => `@${Math.ceil(expiresAt / BUCKET_MS)}`;

function task(ttlMs: number, input: unknown = { n: 1 }): TaskRecord {
  return {
    ...{ id: randomUUID(), tenant: 't', type: 'echo', status: 'working', statusMessage: 'queued' },
    ...{ createdAt: CREATED, updatedAt: CREATED, ttlMs, input: input as TaskRecord['input'] },
    ...{ cancelRequested: false, awaitingInput: false, inputs: [] },
  };
}

async function create(keys: ReturnType<typeof taskKeys>, records: TaskRecord[], now = CREATED) {
  const items = records.map((record) => createItem(keys, { record, maxBytes: 1_000_000 }));
  return createMany.run(redis, {
    keys: { openTenants: keys.openTenants },
    args: { now, pruneBound: indexPruneBound(now - 86_400_000), indexTtl: 600_000 },
    items,
  });
}

const usageOf = (keys: ReturnType<typeof taskKeys>) => redis.hgetall(keys.usage('t'));
const ub = (keys: ReturnType<typeof taskKeys>, id: string) => redis.hget(keys.task(id), 'ub');

describe('storage budget by expiry bucket', () => {
  it("counts the tasks of one call under their buckets, each task's bytes in its record", async () => {
    const keys = taskKeys(`test-${randomUUID()}`);
    // Two tasks expiring in one bucket, one in a later one.
    const [a, b, c] = [task(60_000), task(60_400, { n: 22 }), task(120_000)];
    await create(keys, [a, b, c]);
    const bytes = await Promise.all([a, b, c].map((t) => ub(keys, t.id).then(Number)));
    expect(bytes.every((n) => n > 100)).toBe(true);
    const [first, later] = [bucketOf(CREATED + 60_000), bucketOf(CREATED + 120_000)];
    expect(bucketOf(CREATED + 60_400)).toBe(first);
    expect(await usageOf(keys)).toEqual({
      '#total': String(bytes[0]! + bytes[1]! + bytes[2]!),
      [first]: String(bytes[0]! + bytes[1]!),
      [later]: String(bytes[2]!),
    });
    // Each bucket comes back at the end of its span.
    expect(await redis.zrange(`${keys.usage('t')}-exp`, 0, -1, 'WITHSCORES')).toEqual([
      first,
      String(Number(first.slice(1)) * BUCKET_MS),
      later,
      String(Number(later.slice(1)) * BUCKET_MS),
    ]);
  });

  it("adds a result to the task's record and bucket, and a forget gives the task's bytes back", async () => {
    const keys = taskKeys(`test-${randomUUID()}`);
    const [a, b] = [task(60_000), task(60_000)];
    await create(keys, [a, b]);
    const before = Number(await ub(keys, a.id));
    const bucket = bucketOf(CREATED + 60_000);
    const total0 = Number((await usageOf(keys))['#total']);
    const result = '{"words":3}';
    const done = await completeMany.run(redis, {
      keys: { outbox: keys.outbox },
      args: { channel: keys.eventsChannel, openPrefix: keys.tenantPrefix, updatedAt: CREATED },
      items: [a, b].map((t) => ({ keys: { task: keys.task(t.id) }, args: { id: t.id, result } })),
    });
    expect(done.every((o) => o.ok)).toBe(true);
    expect(Number(await ub(keys, a.id))).toBe(before + result.length);
    let usage = await usageOf(keys);
    expect(Number(usage['#total'])).toBe(total0 + 2 * result.length);
    expect(Number(usage[bucket])).toBe(total0 + 2 * result.length);

    await forgetTask.run(redis, {
      keys: {
        task: keys.task(a.id),
        index: keys.index('t'),
        idem: keys.task(a.id),
        events: keys.events(a.id),
        usage: keys.usage('t'),
      },
      args: { member: `m:${a.id}`, dropIdem: '0', id: a.id },
    });
    usage = await usageOf(keys);
    const left = total0 + 2 * result.length - (before + result.length);
    expect(Number(usage['#total'])).toBe(left);
    expect(Number(usage[bucket])).toBe(left);
    expect(left).toBe(Number(await ub(keys, b.id)));
  });

  it('adds what a transition stores (an error) to the record and its bucket', async () => {
    const keys = taskKeys(`test-${randomUUID()}`);
    const a = task(60_000);
    await create(keys, [a]);
    const before = Number(await ub(keys, a.id));
    const result = '{"partial":true}';
    const out = await transitionTask.run(redis, {
      keys: { task: keys.task(a.id), outbox: keys.outbox },
      args: {
        event: 'complete',
        channel: keys.eventsChannel,
        openPrefix: keys.tenantPrefix,
        id: a.id,
        append: '',
        expectSeq: '',
      },
      items: [
        { args: { field: 'status', value: 'completed' } },
        { args: { field: 'result', value: result } },
      ],
    });
    expect(out).toMatchObject({ ok: true });
    expect(Number(await ub(keys, a.id))).toBe(before + result.length);
    expect(Number((await usageOf(keys))['#total'])).toBe(before + result.length);
  });

  it('gives a bucket back once its span has ended, not before', async () => {
    const keys = taskKeys(`test-${randomUUID()}`);
    const a = task(60_000);
    await create(keys, [a]);
    const bucket = bucketOf(CREATED + 60_000);
    const end = Number(bucket.slice(1)) * BUCKET_MS;
    const usage = (now: number) =>
      tenantUsage.run(redis, {
        keys: { open: keys.openTasks('t'), usage: keys.usage('t') },
        args: { now },
      });
    const bytes = Number(await ub(keys, a.id));
    expect(bytes).toBeGreaterThan(100);
    // Past the task's own expiry its bucket still holds it, up to the bucket's end.
    expect((await usage(CREATED + 60_001)).bytes).toBe(bytes);
    expect((await usage(end - 1)).bytes).toBe(bytes);
    expect((await usage(end)).bytes).toBe(0);
    expect(await usageOf(keys)).toEqual({ '#total': '0' });
    expect(await redis.zcard(`${keys.usage('t')}-exp`)).toBe(0);
  });

  it('writes nothing to the budget for a task created without one', async () => {
    const keys = taskKeys(`test-${randomUUID()}`);
    const a = task(60_000);
    const item = createItem(keys, { record: a });
    await createMany.run(redis, {
      keys: { openTenants: keys.openTenants },
      args: { now: CREATED, pruneBound: indexPruneBound(CREATED - 86_400_000), indexTtl: 600_000 },
      items: [item],
    });
    expect(await ub(keys, a.id)).toBeNull();
    expect(await redis.exists(keys.usage('t'))).toBe(0);
  });
});
