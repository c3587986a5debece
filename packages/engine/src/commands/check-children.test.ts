import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DurableStore } from '../durable-store.js';
import { taskKeys } from '../keys.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const keys = taskKeys(`test-${randomUUID()}`);
const durable = new DurableStore(redis, keys);

describe('check-children', () => {
  it('says the parent waits, with an event only when what it shows changes', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), {
      status: 'working',
      tenant: 't',
      seq: '1',
      ctotal: '3',
      cdone: '1',
      cexp: '5000',
    });
    expect(await durable.checkChildren(id)).toEqual({ kind: 'ok', ready: false, expiresAt: 5000 });
    expect(await redis.hmget(keys.task(id), 'wait', 'msg', 'seq')).toEqual([
      'children',
      'waiting for 2 of 3 child tasks',
      '2',
    ]);
    // Nothing changed: no event. A new earliest expiry is kept, without an event either.
    expect(await durable.checkChildren(id, 7000)).toEqual({
      kind: 'ok',
      ready: false,
      expiresAt: 7000,
    });
    expect(await redis.hmget(keys.task(id), 'seq', 'cexp')).toEqual(['2', '7000']);
    await redis.hset(keys.task(id), 'cdone', '2');
    await durable.checkChildren(id);
    expect(await redis.hmget(keys.task(id), 'seq', 'msg')).toEqual([
      '3',
      'waiting for 1 of 3 child tasks',
    ]);
    await redis.hset(keys.task(id), 'cdone', '3');
    expect(await durable.checkChildren(id)).toEqual({ kind: 'ok', ready: true, expiresAt: 7000 });
    expect(await redis.hget(keys.task(id), 'seq')).toBe('3');
  });

  it('has no expiry to say before children are noted; refuses a finished task; missing', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), { status: 'working', tenant: 't', ctotal: '1' });
    expect(await durable.checkChildren(id)).toEqual({
      kind: 'ok',
      ready: false,
      expiresAt: Infinity,
    });
    const done = randomUUID();
    await redis.hset(keys.task(done), { status: 'cancelled', tenant: 't' });
    expect(await durable.checkChildren(done)).toEqual({ kind: 'refused', current: 'cancelled' });
    expect(await durable.checkChildren(randomUUID())).toEqual({ kind: 'missing' });
  });
});
