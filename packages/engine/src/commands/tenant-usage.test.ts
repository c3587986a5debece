import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { taskKeys } from '../keys.js';
import { tenantUsage } from './tenant-usage.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

describe('tenant-usage', () => {
  it('counts open tasks not yet expired and the bytes stored, after releasing the expired ones', async () => {
    const keys = taskKeys(`test-${randomUUID()}`);
    const usage = keys.usage('t');
    const now = 1_000_000;
    await redis.zadd(keys.openTasks('t'), now - 1, 'expired', now + 1, 'a', now + 2, 'b');
    await redis.hset(usage, 'old', '30', 'live', '20', '#total', '50');
    // A stray expiry entry with no bytes (its bytes were given back by a forget) must go as
    // well: it would come back first at every prune and hold its place (includes/usage).
    await redis.zadd(`${usage}-exp`, now - 5, 'old', now - 4, 'stray', now + 10, 'live');
    const got = await tenantUsage.run(redis, {
      keys: { open: keys.openTasks('t'), usage },
      args: { now },
    });
    expect(got).toEqual({ open: 2, bytes: 20 });
    expect(await redis.zrange(`${usage}-exp`, 0, -1)).toEqual(['live']);
    expect(await redis.hexists(usage, 'old')).toBe(0);
  });
});
