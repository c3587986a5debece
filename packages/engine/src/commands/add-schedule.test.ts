import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SCHEDULE_FIELD } from '../schedule-fields.js';
import { addSchedule } from './add-schedule.js';

const redis = new Redis(inject('redisUrl'));
const prefix = `test-${randomUUID()}`;
const index = `${prefix}:schedules:acme`;
const hash = (id: string) => `${prefix}:schedule:${id}`;
const claimKey = `${prefix}:idem:k1`;
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

const add = (id: string, max: number, claim?: { value: string; ttlMs: number }) =>
  addSchedule.run(redis, {
    keys: { index, schedule: hash(id), claim: claim ? claimKey : hash(id) },
    args: {
      max,
      id,
      tenant: 'acme',
      created: 1000 + Number(id.slice(1)),
      spec: `{"type":"echo","n":"${id}"}`,
      claimValue: claim?.value ?? '',
      claimTtl: claim?.ttlMs ?? 0,
    },
  });

describe('add-schedule', () => {
  it('stores the hash under its field names and indexes the id by creation time', async () => {
    expect(await add('s1', 2)).toEqual({ kind: 'ok' });
    expect(await redis.hgetall(hash('s1'))).toEqual({
      [SCHEDULE_FIELD.tenant]: 'acme',
      [SCHEDULE_FIELD.createdAt]: '1001',
      [SCHEDULE_FIELD.spec]: '{"type":"echo","n":"s1"}',
    });
    expect(await redis.zrange(index, 0, -1, 'WITHSCORES')).toEqual(['s1', '1001']);
  });

  it('claims the Idempotency-Key in the same step, naming the claim in the hash', async () => {
    expect(await add('s2', 2, { value: 's2 h', ttlMs: 60_000 })).toEqual({ kind: 'ok' });
    expect(await redis.get(claimKey)).toBe('s2 h');
    const ttl = await redis.pttl(claimKey);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(await redis.hget(hash('s2'), SCHEDULE_FIELD.idem)).toBe(claimKey);
  });

  it('refuses a claim taken before, writing nothing', async () => {
    expect(await add('s3', 0, { value: 's3 h', ttlMs: 60_000 })).toEqual({
      kind: 'dup',
      claimed: 's2 h',
    });
    expect(await redis.exists(hash('s3'))).toBe(0);
    expect(await redis.zcard(index)).toBe(2);
  });

  it('refuses at the cap with the count, writing nothing; no cap (0) adds', async () => {
    expect(await add('s4', 2)).toEqual({ kind: 'full', count: 2 });
    expect(await redis.exists(hash('s4'))).toBe(0);
    expect(await add('s5', 0)).toEqual({ kind: 'ok' });
    expect(await redis.zcard(index)).toBe(3);
  });

  it('run again (a call Redis runs twice), answers ok at the cap its first run reached', async () => {
    const count = await redis.zcard(index);
    expect(await add('s9', count + 1)).toEqual({ kind: 'ok' });
    expect(await add('s9', count + 1)).toEqual({ kind: 'ok' });
    expect(await redis.zcard(index)).toBe(count + 1);
    // Another schedule at the cap is still refused.
    expect(await add('s8', count + 1)).toEqual({ kind: 'full', count: count + 1 });
  });
});
