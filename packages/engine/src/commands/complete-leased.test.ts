import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { LIFECYCLE } from '@longrun/core';
import { taskKeys } from '../keys.js';
import { completeLeased } from './complete-leased.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

describe('complete-leased', () => {
  it("completes a task only while its lease's token holds the job's lock: lost otherwise, nothing written", async () => {
    const prefix = `test-${randomUUID()}`;
    const keys = taskKeys(prefix);
    const [held, stolen, gone, cancelled] = [
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
    ];
    const base = { tenant: 't', msg: 'queued', updated: '1', seq: '1' };
    for (const id of [held, stolen, gone]) {
      await redis.hset(keys.task(id), { ...base, status: 'working' });
    }
    await redis.hset(keys.task(cancelled), { ...base, status: 'cancelled' });
    const lock = (id: string) => `${prefix}:q:${id}:lock`;
    await redis.set(lock(held), 'tok', 'PX', 60_000);
    await redis.set(lock(stolen), 'another-token', 'PX', 60_000);
    await redis.set(lock(cancelled), 'tok', 'PX', 60_000);
    const outcomes = await completeLeased.run(redis, {
      keys: { outbox: keys.outbox },
      args: { channel: keys.eventsChannel, openPrefix: keys.tenantPrefix, updatedAt: 5 },
      items: [held, stolen, gone, cancelled].map((id) => ({
        keys: { task: keys.task(id), lock: lock(id) },
        args: { id, result: '{"n":1}', token: 'tok' },
      })),
    });
    expect(outcomes).toEqual([
      { ok: true, previous: 'working', eventId: '2' },
      { ok: false, reason: 'lost' },
      { ok: false, reason: 'lost' },
      { ok: false, reason: 'refused', current: 'cancelled' },
    ]);
    expect(await redis.hgetall(keys.task(held))).toMatchObject({
      status: LIFECYCLE.complete.to,
      result: '{"n":1}',
      seq: '2',
    });
    for (const id of [stolen, gone]) {
      expect(await redis.hgetall(keys.task(id))).toMatchObject({ status: 'working', seq: '1' });
    }
    expect(await redis.get(lock(stolen))).toBe('another-token');
    await redis.del(...[held, stolen, gone, cancelled].flatMap((id) => [keys.task(id), lock(id)]));
  });

  it('run again after the job finished (lock gone), answers ok for its own result; lost for another', async () => {
    const prefix = `test-${randomUUID()}`;
    const keys = taskKeys(prefix);
    const id = randomUUID();
    await redis.hset(keys.task(id), {
      tenant: 't',
      msg: 'q',
      updated: '1',
      seq: '1',
      status: 'working',
    });
    const lock = `${prefix}:q:${id}:lock`;
    await redis.set(lock, 'tok', 'PX', 60_000);
    const complete = (result: string) =>
      completeLeased.run(redis, {
        keys: { outbox: keys.outbox },
        args: { channel: keys.eventsChannel, openPrefix: keys.tenantPrefix, updatedAt: 5 },
        items: [{ keys: { task: keys.task(id), lock }, args: { id, result, token: 'tok' } }],
      });
    expect(await complete('{"n":1}')).toEqual([{ ok: true, previous: 'working', eventId: '2' }]);
    // Its job's finish (BullMQ's moveToFinished) followed on the connection: the lock is gone.
    await redis.del(lock);
    expect(await complete('{"n":1}')).toEqual([{ ok: true, previous: 'completed', eventId: '2' }]);
    expect(await complete('{"n":2}')).toEqual([{ ok: false, reason: 'lost' }]);
  });
});
