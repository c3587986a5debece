import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { LIFECYCLE } from '@longrun/core';
import { taskKeys } from '../keys.js';
import { completeMany } from './complete-many.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

describe('complete-many', () => {
  it('completes each task on its own: ok, refused, missing; the webhook of one with a callback', async () => {
    const keys = taskKeys(`test-${randomUUID()}`);
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const base = { tenant: 't', msg: 'queued', updated: '1', seq: '1' };
    await redis.hset(keys.task(a), {
      ...base,
      status: 'working',
      progress: '40',
      callback: '{"url":"x"}',
    });
    await redis.hset(keys.task(b), { ...base, status: 'cancelled' });
    await redis.zadd(keys.openTasks('t'), Date.now() + 60_000, a);
    const outcomes = await completeMany.run(redis, {
      keys: { outbox: keys.outbox },
      args: { channel: keys.eventsChannel, openPrefix: keys.tenantPrefix, updatedAt: 5 },
      items: [a, b, c].map((id) => ({
        keys: { task: keys.task(id) },
        args: { id, result: '{"n":1}' },
      })),
    });
    expect(outcomes).toEqual([
      { ok: true, previous: 'working', eventId: '2' },
      { ok: false, reason: 'refused', current: 'cancelled' },
      { ok: false, reason: 'missing' },
    ]);
    const record = await redis.hgetall(keys.task(a));
    expect(record).toMatchObject({
      status: LIFECYCLE.complete.to,
      msg: LIFECYCLE.complete.statusMessage,
      result: '{"n":1}',
      progress: '100',
      seq: '2',
      updated: '5',
    });
    expect(JSON.parse(record.e1 ?? '')).toEqual({
      s: 1,
      st: 'working',
      m: 'queued',
      u: 1,
      p: '40',
    });
    expect(await redis.zscore(keys.openTasks('t'), a)).toBeNull();
    const outbox = await redis.xrange(keys.outbox, '-', '+');
    expect(outbox.map(([, fields]) => fields)).toEqual([['task', a, 'event', '2']]);
    expect(await redis.hget(keys.task(b), 'status')).toBe('cancelled');
  });
});
