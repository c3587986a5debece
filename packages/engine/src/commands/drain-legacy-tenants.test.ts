import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { taskKeys } from '../keys.js';
import { drainLegacyTenants } from './drain-legacy-tenants.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

describe('drain-legacy-tenants', () => {
  it('moves at most a batch of tenants from the legacy set into the sorted one, losing none', async () => {
    const keys = taskKeys(`test-${randomUUID()}`);
    await redis.sadd(keys.legacyOpenTenants, 'a', 'b', 'c');
    const drain = (batch: number) =>
      drainLegacyTenants.run(redis, {
        keys: { legacy: keys.legacyOpenTenants, openTenants: keys.openTenants },
        args: { batch },
      });
    expect(await drain(2)).toBe(2);
    expect(await drain(2)).toBe(1);
    expect(await drain(2)).toBe(0);
    expect((await redis.zrange(keys.openTenants, 0, -1)).sort()).toEqual(['a', 'b', 'c']);
  });
});
