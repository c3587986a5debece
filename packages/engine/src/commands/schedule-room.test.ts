import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { scheduleRoom } from './schedule-room.js';

const redis = new Redis(inject('redisUrl'));
const prefix = `test-${randomUUID()}`;
const index = `${prefix}:schedules:acme`;
const claim = `${prefix}:idem:k1`;
afterAll(async () => {
  await redis.del(index, claim);
  await redis.quit();
});

const room = (max: number, withClaim: boolean) =>
  scheduleRoom.run(redis, {
    keys: { index, claim: withClaim ? claim : index },
    args: { max, checkClaim: withClaim ? '1' : '0' },
  });

describe('schedule-room', () => {
  it('finds room under the cap, and always with no cap (0)', async () => {
    await redis.zadd(index, 1, 's1', 2, 's2');
    expect(await room(3, false)).toEqual({ kind: 'ok' });
    expect(await room(0, false)).toEqual({ kind: 'ok' });
  });

  it('refuses at the cap with the count', async () => {
    expect(await room(2, false)).toEqual({ kind: 'full', count: 2 });
    expect(await room(1, false)).toEqual({ kind: 'full', count: 2 });
  });

  it('names the claim taken before, ahead of the cap; ignores it when not asked to look', async () => {
    expect(await room(2, true)).toEqual({ kind: 'full', count: 2 });
    await redis.set(claim, 's9 hash');
    expect(await room(2, true)).toEqual({ kind: 'dup', claimed: 's9 hash' });
    expect(await room(5, true)).toEqual({ kind: 'dup', claimed: 's9 hash' });
    expect(await room(5, false)).toEqual({ kind: 'ok' });
  });
});
