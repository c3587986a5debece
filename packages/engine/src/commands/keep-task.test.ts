import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DurableStore } from '../durable-store.js';
import { taskKeys } from '../keys.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const keys = taskKeys(`test-${randomUUID()}`);
const durable = new DurableStore(redis, keys);

async function task(ttlMs?: number): Promise<string> {
  const id = randomUUID();
  await redis.hset(keys.task(id), { status: 'working' });
  if (ttlMs !== undefined) await redis.pexpire(keys.task(id), ttlMs);
  return id;
}

describe('keep-task (issue 40)', () => {
  it('moves the expiry later, never earlier', async () => {
    const id = await task(10_000);
    expect(await durable.keep(id, Date.now() + 600_000)).toBe('ok');
    expect(await redis.pttl(keys.task(id))).toBeGreaterThan(500_000);
    expect(await durable.keep(id, Date.now() + 1000)).toBe('ok');
    expect(await redis.pttl(keys.task(id))).toBeGreaterThan(500_000);
  });

  it('leaves a record with no expiry so, and answers missing for none', async () => {
    const id = await task();
    expect(await durable.keep(id, Date.now() + 1000)).toBe('ok');
    expect(await redis.pttl(keys.task(id))).toBe(-1);
    expect(await durable.keep(randomUUID(), Date.now() + 1000)).toBe('missing');
  });
});
