import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { taskKeys } from '../keys.js';
import { forgetTask } from './forget-task.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const keys = taskKeys(`test-${randomUUID()}`);
const forget = (id: string, idem = keys.task(id)) =>
  forgetTask.run(redis, {
    keys: {
      task: keys.task(id),
      index: keys.index('t'),
      idem,
      events: keys.events(id),
      usage: keys.usage('t'),
    },
    args: { member: `m:${id}`, dropIdem: idem === keys.task(id) ? '0' : '1', id },
  });

describe('forget-task', () => {
  it('deletes a terminal task, its old event list, index entry and idempotency key, and gives its bytes back', async () => {
    const id = randomUUID();
    const idem = `${keys.task('')}idem-${id}`;
    await redis.hset(keys.task(id), { status: 'completed', tenant: 't' });
    await redis.rpush(keys.events(id), '{}');
    await redis.zadd(keys.index('t'), 0, `m:${id}`);
    await redis.set(idem, id);
    await redis.hset(keys.usage('t'), id, '40', '#total', '100');
    await redis.zadd(`${keys.usage('t')}-exp`, 1, id);
    expect(await forget(id, idem)).toEqual({ ok: true, previous: 'completed', eventId: '' });
    expect(await redis.exists(keys.task(id), keys.events(id), idem)).toBe(0);
    expect(await redis.zscore(keys.index('t'), `m:${id}`)).toBeNull();
    expect(await redis.hget(keys.usage('t'), '#total')).toBe('60');
    expect(await redis.zscore(`${keys.usage('t')}-exp`, id)).toBeNull();
  });

  it("drops the task's entries from the indexes of the tags its record names", async () => {
    const id = randomUUID();
    const other = randomUUID();
    const tags = ['red', 'blå ✓'];
    await redis.hset(keys.task(id), { status: 'failed', tenant: 't', tags: JSON.stringify(tags) });
    for (const tag of tags) {
      await redis.zadd(keys.tagIndex('t', tag), 0, `m:${id}`, 0, `m:${other}`);
    }
    expect(await forget(id)).toMatchObject({ ok: true, previous: 'failed' });
    for (const tag of tags) {
      expect(await redis.zrange(keys.tagIndex('t', tag), 0, -1)).toEqual([`m:${other}`]);
    }
  });

  it('refuses a task not finished, and answers missing for one that is gone', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), { status: 'working', tenant: 't' });
    expect(await forget(id)).toEqual({ ok: false, reason: 'refused', current: 'working' });
    expect(await redis.exists(keys.task(id))).toBe(1);
    expect(await forget(randomUUID())).toEqual({ ok: false, reason: 'missing' });
  });
});
