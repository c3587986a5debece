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
  const base = { status: 'working', tenant: 't', msg: 'running', updated: '1', seq: '1' };
  await redis.hset(keys.task(id), { ...base, ...fields });
  return id;
}

describe('record-step', () => {
  it('stores a step once, as one event, and adds it to the summary', async () => {
    const id = await task();
    const first = await durable.recordStep(id, {
      name: 'a',
      value: '{"n":1}',
      endedAt: 5,
      message: 'step a completed',
    });
    expect(first).toEqual({ kind: 'ok', ready: false });
    const record = await redis.hgetall(keys.task(id));
    expect(record['st:a']).toBe('{"n":1}');
    expect(JSON.parse(record.steps!)).toEqual([{ name: 'a', status: 'completed', endedAt: 5 }]);
    expect(record).toMatchObject({ msg: 'step a completed', seq: '2' });
    // A second record of the same step keeps the first result: every run gets the same value.
    expect(await durable.recordStep(id, { name: 'a', value: '{"n":2}' })).toEqual({
      kind: 'exists',
      value: '{"n":1}',
    });
    expect(await redis.hget(keys.task(id), 'seq')).toBe('2');
    await durable.recordStep(id, { name: 'b', value: '2', endedAt: 6 });
    expect(JSON.parse((await redis.hget(keys.task(id), 'steps'))!)).toHaveLength(2);
  });

  it('refuses a task that is not working, and answers missing when gone', async () => {
    const id = await task({ status: 'cancelled' });
    expect(await durable.recordStep(id, { name: 'a', value: '1' })).toEqual({
      kind: 'refused',
      current: 'cancelled',
    });
    expect(await redis.hexists(keys.task(id), 'st:a')).toBe(0);
    expect(await durable.recordStep(randomUUID(), { name: 'a', value: '1' })).toEqual({
      kind: 'missing',
    });
  });

  it('appends children, and a children wait is ready once all of them ended', async () => {
    const id = await task();
    await durable.recordStep(id, {
      name: '$children:1',
      value: '["c1","c2"]',
      children: ['c1', 'c2'],
    });
    expect(await redis.hmget(keys.task(id), 'children', 'ctotal')).toEqual(['["c1","c2"]', '2']);
    const waiting = await durable.recordStep(id, { name: '', value: '', wait: 'children' });
    expect(waiting).toEqual({ kind: 'ok', ready: false });
    expect(await redis.hget(keys.task(id), 'msg')).toBe('waiting for 2 of 2 child tasks');
    await redis.hset(keys.task(id), 'cdone', '2');
    expect(await durable.recordStep(id, { name: '', value: '', wait: 'children' })).toEqual({
      kind: 'ok',
      ready: true,
    });
    // A wait that is over at once says nothing new ("waiting for 0 of 2" would be untrue).
    expect(await redis.hget(keys.task(id), 'msg')).toBe('waiting for 2 of 2 child tasks');
  });

  it("a waitpoint wait is ready when the waitpoint's data is there", async () => {
    const id = await task({ 'st:$waitpoint:1': '{}' });
    const wait = { name: '', value: '', wait: 'wp:$waitpoint:1' };
    expect(await durable.recordStep(id, wait)).toEqual({ kind: 'ok', ready: false });
    expect(await redis.hget(keys.task(id), 'wait')).toBe('wp:$waitpoint:1');
    await redis.hset(keys.task(id), 'st:$waitpoint:1:data', '7');
    expect(await durable.recordStep(id, wait)).toEqual({ kind: 'ok', ready: true });
  });
});
