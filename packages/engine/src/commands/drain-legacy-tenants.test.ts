import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { drainLegacyTenants } from './drain-legacy-tenants.js';

const redis = new Redis(inject('redisUrl'));
const prefix = `test-${randomUUID()}`;
const legacy = `${prefix}:tenants`;
const tenants = `${prefix}:open-tenants`;
afterAll(async () => {
  await redis.del(legacy, tenants);
  await redis.quit();
});

const drain = (batch: number) =>
  drainLegacyTenants.run(redis, { keys: { legacy, tenants }, args: { batch } });

describe('drain-legacy-tenants', () => {
  it('moves up to a batch of names at a time, with score 0, until the plain set is gone', async () => {
    await redis.sadd(legacy, 'a', 'b', 'c');
    await redis.zadd(tenants, 0, 'a');
    expect(await drain(2)).toBe(2);
    expect(await redis.scard(legacy)).toBe(1);
    expect(await drain(2)).toBe(1);
    expect(await redis.exists(legacy)).toBe(0);
    expect(await redis.zrange(tenants, 0, -1, 'WITHSCORES')).toEqual([
      'a',
      '0',
      'b',
      '0',
      'c',
      '0',
    ]);
    expect(await drain(2)).toBe(0);
  });
});
