import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DurableStore } from '../durable-store.js';
import { taskKeys } from '../keys.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const keys = taskKeys(`test-${randomUUID()}`);
const durable = new DurableStore(redis, keys);

describe('child-may-start', () => {
  it('runs a listed child, waits for an unlisted one while its parent makes them', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), { status: 'working', children: JSON.stringify(['a', 'b']) });
    expect(await durable.childMayStart(id, 'b')).toBe('run');
    expect(await durable.childMayStart(id, 'c')).toBe('wait');
  });

  it('cancels under a cancelled parent; runs under a finished or gone one', async () => {
    const cancelled = randomUUID();
    await redis.hset(keys.task(cancelled), { status: 'cancelled', children: '["a"]' });
    expect(await durable.childMayStart(cancelled, 'a')).toBe('cancelled');
    const failed = randomUUID();
    await redis.hset(keys.task(failed), { status: 'failed' });
    expect(await durable.childMayStart(failed, 'a')).toBe('run');
    expect(await durable.childMayStart(randomUUID(), 'a')).toBe('run');
  });
});
