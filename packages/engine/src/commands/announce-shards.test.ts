import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { announceShards } from './announce-shards.js';

const redis = new Redis(inject('redisUrl'));
const key = `test-${randomUUID()}:shards`;
afterAll(async () => {
  await redis.del(key);
  await redis.quit();
});

describe('announce-shards', () => {
  it('stores the first count, raises it, and never lowers it', async () => {
    const announce = (count: number) =>
      announceShards.run(redis, { keys: { count: key }, args: { count } });
    expect(await announce(2)).toBe(2);
    expect(await announce(5)).toBe(5);
    expect(await announce(3)).toBe(5);
    expect(await redis.get(key)).toBe('5');
  });
});
