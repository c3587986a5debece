import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DurableStore } from '../durable-store.js';
import { taskKeys } from '../keys.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const keys = taskKeys(`test-${randomUUID()}`);
const durable = new DurableStore(redis, keys);

async function task(fields: Record<string, string> = {}): Promise<string> {
  const id = randomUUID();
  const base = { status: 'working', tenant: 't', msg: 'x', updated: '1', seq: '1' };
  await redis.hset(keys.task(id), { ...base, 'st:$waitpoint:1': '{}', ...fields });
  return id;
}

describe('complete-waitpoint', () => {
  it('stores the data once, as one event, and says to wake a task waiting on it', async () => {
    const id = await task({ wait: 'wp:$waitpoint:1' });
    const done = await durable.completeWaitpoint(
      't',
      id,
      '$waitpoint:1',
      { paid: true },
      'wp done',
    );
    expect(done).toEqual({ kind: 'ok', wake: true });
    const record = await redis.hgetall(keys.task(id));
    expect(record['st:$waitpoint:1:data']).toBe('{"paid":true}');
    expect(record).toMatchObject({ msg: 'wp done', seq: '2' });
    // Appended to the steps (issue 40), and carried by its event (2).
    expect(JSON.parse(record.s1!)).toMatchObject({
      name: '$waitpoint:1:data',
      status: 'completed',
    });
    expect(record.sc).toBe('1');
    expect(JSON.parse(record.es2!)).toMatchObject({ name: '$waitpoint:1:data' });
    expect(await durable.completeWaitpoint('t', id, '$waitpoint:1', 2, 'again')).toEqual({
      kind: 'completed',
    });
    expect(await redis.hget(keys.task(id), 'st:$waitpoint:1:data')).toBe('{"paid":true}');
  });

  it('run again as the same call (op), answers as it did; another call is told completed', async () => {
    const id = await task({ wait: 'wp:$waitpoint:1' });
    const complete = (op: string) =>
      durable.completeWaitpoint('t', id, '$waitpoint:1', { n: 1 }, 'wp done', op);
    expect(await complete('call-1')).toEqual({ kind: 'ok', wake: true });
    expect(await complete('call-1')).toEqual({ kind: 'ok', wake: true });
    expect(await redis.hget(keys.task(id), 'seq')).toBe('2');
    expect(await complete('call-2')).toEqual({ kind: 'completed' });
  });

  it('does not wake a task that is not waiting on it yet', async () => {
    const id = await task();
    expect(await durable.completeWaitpoint('t', id, '$waitpoint:1', 1, 'm')).toEqual({
      kind: 'ok',
      wake: false,
    });
  });

  it("answers absent for another tenant's task, a missing one, or no such waitpoint", async () => {
    const id = await task();
    expect(await durable.completeWaitpoint('u', id, '$waitpoint:1', 1, 'm')).toEqual({
      kind: 'absent',
    });
    expect(await durable.completeWaitpoint('t', id, '$waitpoint:2', 1, 'm')).toEqual({
      kind: 'absent',
    });
    expect(await durable.completeWaitpoint('t', randomUUID(), '$waitpoint:1', 1, 'm')).toEqual({
      kind: 'absent',
    });
    expect(await redis.hexists(keys.task(id), 'st:$waitpoint:1:data')).toBe(0);
  });

  it("refuses data that would pass the tenant's storage budget (over-budget); data that fits counts", async () => {
    const usage = keys.usage('t');
    const now = Date.now();
    await redis.hset(usage, `@${Math.ceil((now + 60_000) / 1000)}`, '100', '#total', '100');
    const id = await task({ ub: '100', created: String(now), ttl: '60000' });
    const big = 'x'.repeat(2000);
    expect(await durable.completeWaitpoint('t', id, '$waitpoint:1', big, 'm', '', 1000)).toEqual({
      kind: 'overBudget',
      usedBytes: 100,
      retryAfterMs: 1000,
    });
    expect(await redis.hexists(keys.task(id), 'st:$waitpoint:1:data')).toBe(0);
    expect(
      (await durable.completeWaitpoint('t', id, '$waitpoint:1', big, 'm', '', 5000)).kind,
    ).toBe('ok');
    const total = Number(await redis.hget(usage, '#total'));
    expect(total).toBeGreaterThan(2100);
    expect(await redis.hget(keys.task(id), 'ub')).toBe(String(total));
    await redis.del(usage);
  });

  it('refuses a finished task', async () => {
    const id = await task({ status: 'completed' });
    expect(await durable.completeWaitpoint('t', id, '$waitpoint:1', 1, 'm')).toEqual({
      kind: 'refused',
      current: 'completed',
    });
  });

  it('answers timedOut once the waitpoint expired, or its run recorded the timeout (issue 40)', async () => {
    const past = await task({ 'st:$waitpoint:1': JSON.stringify({ expiresAt: Date.now() - 1 }) });
    expect(await durable.completeWaitpoint('t', past, '$waitpoint:1', 1, 'm')).toEqual({
      kind: 'timedOut',
    });
    expect(await redis.hexists(keys.task(past), 'st:$waitpoint:1:data')).toBe(0);
    // The worker's clock passed it first: its recorded timeout wins over this clock.
    const recorded = await task({
      'st:$waitpoint:1': JSON.stringify({ expiresAt: Date.now() + 60_000 }),
      'st:$waitpoint:1:timeout': '1',
    });
    expect(await durable.completeWaitpoint('t', recorded, '$waitpoint:1', 1, 'm')).toEqual({
      kind: 'timedOut',
    });
    // Not yet expired: completed as usual.
    const future = await task({
      'st:$waitpoint:1': JSON.stringify({ expiresAt: Date.now() + 60_000 }),
    });
    expect(await durable.completeWaitpoint('t', future, '$waitpoint:1', 1, 'm')).toMatchObject({
      kind: 'ok',
    });
  });
});
