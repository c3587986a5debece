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

  it("adds each tracked task's result bytes to it and to its tenant's total; an untracked task's to neither", async () => {
    const keys = taskKeys(`test-${randomUUID()}`);
    const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const tenantOf = ['t', 't', 'u', 't'];
    for (const [i, id] of ids.entries()) {
      await redis.hset(keys.task(id), { tenant: tenantOf[i]!, status: 'working', seq: '1' });
    }
    // Tracked under a budget: the first two of t and the one of u; the last of t is not.
    await redis.hset(keys.usage('t'), { '#total': '100', [ids[0]!]: '60', [ids[1]!]: '40' });
    await redis.hset(keys.usage('u'), { '#total': '7', [ids[2]!]: '7' });
    const results = ['"abc"', '[1,2]', '{"k":"vvvv"}', '"untracked"'];
    const outcomes = await completeMany.run(redis, {
      keys: { outbox: keys.outbox },
      args: { channel: keys.eventsChannel, openPrefix: keys.tenantPrefix, updatedAt: 5 },
      items: ids.map((id, i) => ({
        keys: { task: keys.task(id) },
        args: { id, result: results[i]! },
      })),
    });
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(await redis.hgetall(keys.usage('t'))).toEqual({
      '#total': String(100 + 5 + 5),
      [ids[0]!]: String(60 + 5),
      [ids[1]!]: String(40 + 5),
    });
    expect(await redis.hgetall(keys.usage('u'))).toEqual({ '#total': '19', [ids[2]!]: '19' });
  });

  it('run again (a call Redis runs twice), answers ok for its own result; refused for another', async () => {
    const keys = taskKeys(`test-${randomUUID()}`);
    const id = randomUUID();
    await redis.hset(keys.task(id), {
      tenant: 't',
      msg: 'q',
      updated: '1',
      seq: '1',
      status: 'working',
    });
    const complete = (result: string) =>
      completeMany.run(redis, {
        keys: { outbox: keys.outbox },
        args: { channel: keys.eventsChannel, openPrefix: keys.tenantPrefix, updatedAt: 5 },
        items: [{ keys: { task: keys.task(id) }, args: { id, result } }],
      });
    expect(await complete('{"n":1}')).toEqual([{ ok: true, previous: 'working', eventId: '2' }]);
    expect(await complete('{"n":1}')).toEqual([{ ok: true, previous: 'completed', eventId: '2' }]);
    expect(await redis.hget(keys.task(id), 'seq')).toBe('2');
    expect(await complete('{"n":2}')).toEqual([
      { ok: false, reason: 'refused', current: 'completed' },
    ]);
  });
});
