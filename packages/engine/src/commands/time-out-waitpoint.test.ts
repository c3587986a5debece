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

describe('time-out-waitpoint (issue 40)', () => {
  it('records the timeout once, as a step and one event; run again it answers ok and writes nothing', async () => {
    const id = await task();
    expect(await durable.timeOutWaitpoint(id, '$waitpoint:1', 'wp timed out')).toEqual({
      kind: 'ok',
    });
    const record = await redis.hgetall(keys.task(id));
    expect(record['st:$waitpoint:1:timeout']).toMatch(/^\d+$/);
    expect(record).toMatchObject({ msg: 'wp timed out', seq: '2' });
    expect(JSON.parse(record.stail!)).toEqual([
      expect.objectContaining({ name: '$waitpoint:1:timeout', status: 'completed' }),
    ]);
    expect(await durable.timeOutWaitpoint(id, '$waitpoint:1', 'again')).toEqual({ kind: 'ok' });
    expect(await redis.hget(keys.task(id), 'seq')).toBe('2');
    // The data can no longer come.
    expect(await durable.completeWaitpoint('t', id, '$waitpoint:1', 1, 'late')).toEqual({
      kind: 'timedOut',
    });
  });

  it('gives the data when it came first: the waitpoint has that outcome', async () => {
    const id = await task({ 'st:$waitpoint:1:data': '{"paid":1}' });
    expect(await durable.timeOutWaitpoint(id, '$waitpoint:1', 'm')).toEqual({
      kind: 'completed',
      data: '{"paid":1}',
    });
    expect(await redis.hexists(keys.task(id), 'st:$waitpoint:1:timeout')).toBe(0);
  });

  it('answers missing for no task, refused for one that is not working', async () => {
    expect(await durable.timeOutWaitpoint(randomUUID(), '$waitpoint:1', 'm')).toEqual({
      kind: 'missing',
    });
    const id = await task({ status: 'cancelled' });
    expect(await durable.timeOutWaitpoint(id, '$waitpoint:1', 'm')).toEqual({
      kind: 'refused',
      current: 'cancelled',
    });
  });
});
