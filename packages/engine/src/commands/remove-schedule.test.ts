import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SCHEDULE_FIELD } from '../schedule-fields.js';
import { removeSchedule } from './remove-schedule.js';

const redis = new Redis(inject('redisUrl'));
const prefix = `test-${randomUUID()}`;
const index = `${prefix}:schedules:acme`;
const hash = (id: string) => `${prefix}:schedule:${id}`;
const claim = `${prefix}:idem:k1`;
afterAll(async () => {
  await redis.del(index, hash('s1'), hash('s2'), claim);
  await redis.quit();
});

const remove = (id: string) =>
  removeSchedule.run(redis, { keys: { schedule: hash(id), index }, args: { id } });

describe('remove-schedule', () => {
  it('drops the hash, its index entry and its claim; other schedules stay', async () => {
    await redis.hset(hash('s1'), SCHEDULE_FIELD.tenant, 'acme', SCHEDULE_FIELD.idem, claim);
    await redis.set(claim, 's1 h');
    await redis.hset(hash('s2'), SCHEDULE_FIELD.tenant, 'acme');
    await redis.zadd(index, 1, 's1', 2, 's2');
    expect(await remove('s1')).toEqual({ kind: 'ok' });
    expect(await redis.exists(hash('s1'), claim)).toBe(0);
    expect(await redis.zrange(index, 0, -1)).toEqual(['s2']);
    expect(await redis.exists(hash('s2'))).toBe(1);
  });

  it('removes one without a claim, and one already gone changes nothing', async () => {
    expect(await remove('s2')).toEqual({ kind: 'ok' });
    expect(await redis.exists(hash('s2'), index)).toBe(0);
    expect(await remove('s2')).toEqual({ kind: 'ok' });
  });
});
