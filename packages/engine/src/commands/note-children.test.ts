import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DurableStore } from '../durable-store.js';
import { taskKeys } from '../keys.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const keys = taskKeys(`test-${randomUUID()}`);
const durable = new DurableStore(redis, keys);

describe('note-children', () => {
  it('appends each chunk once, in order, counts them and keeps the earliest expiry', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), { status: 'working', tenant: 't' });
    expect(await durable.noteChildren(id, '$children:1', 0, ['a', 'b'], 5000)).toEqual({
      kind: 'ok',
    });
    // The same chunk again (a run made again, or Redis running the call twice): nothing added.
    expect(await durable.noteChildren(id, '$children:1', 0, ['a', 'b'], 5000)).toEqual({
      kind: 'ok',
    });
    // A run made again that made one more: only the new one is added.
    await durable.noteChildren(id, '$children:1', 0, ['a', 'b', 'c'], 4000);
    await durable.noteChildren(id, '$children:2', 0, ['d'], 9000);
    const got = await redis.hmget(keys.task(id), 'children', 'ctotal', 'cexp', 'cn:$children:1');
    expect(got).toEqual([JSON.stringify(['a', 'b', 'c', 'd']), '4', '4000', '3']);
  });

  it('lists and counts a child made again under its own key once (issue 40, item 12)', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), { status: 'working', tenant: 't' });
    await durable.noteChildren(id, '$children:1', 0, ['a', 'b', 'a'], 5000);
    await durable.noteChildren(id, '$children:2', 0, ['b', 'c'], 5000);
    const got = await redis.hmget(keys.task(id), 'children', 'ctotal', 'cn:$children:2');
    expect(got).toEqual([JSON.stringify(['a', 'b', 'c']), '3', '2']);
  });

  it('records the chunk of a cancelled parent but refuses it; a missing parent is missing', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), { status: 'cancelled', tenant: 't' });
    expect(await durable.noteChildren(id, '$children:1', 0, ['a'], 5000)).toEqual({
      kind: 'refused',
      current: 'cancelled',
    });
    expect(await redis.hget(keys.task(id), 'children')).toBe(JSON.stringify(['a']));
    expect(await durable.noteChildren(randomUUID(), '$children:1', 0, ['a'], 1)).toEqual({
      kind: 'missing',
    });
  });
});
