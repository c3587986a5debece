import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { taskKeys } from '../keys.js';
import { discardTask } from './discard-task.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const keys = taskKeys(`test-${randomUUID()}`);
const idemKey = (id: string) => `${keys.task('')}idem-${id}`;
const discard = (id: string, idemValue = `${id} body`) =>
  discardTask.run(redis, {
    keys: {
      task: keys.task(id),
      index: keys.index('t'),
      idem: idemKey(id),
      events: keys.events(id),
      open: keys.openTasks('t'),
      usage: keys.usage('t'),
    },
    args: { member: `m:${id}`, idemValue, id },
  });

describe('discard-task', () => {
  it('takes back an untouched task with its entries and its own idempotency key (discarded)', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), { status: 'working', seq: '1' });
    await redis.zadd(keys.index('t'), 0, `m:${id}`);
    await redis.zadd(keys.openTasks('t'), 1, id);
    await redis.set(idemKey(id), `${id} body`);
    expect(await discard(id)).toBe('discarded');
    expect(await redis.exists(keys.task(id), idemKey(id))).toBe(0);
    expect(await redis.zscore(keys.openTasks('t'), id)).toBeNull();
    expect(await redis.zscore(keys.index('t'), `m:${id}`)).toBeNull();
  });

  it("keeps an idempotency key that names another request's task", async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), { status: 'working', seq: '1' });
    await redis.set(idemKey(id), 'other body');
    expect(await discard(id)).toBe('discarded');
    expect(await redis.get(idemKey(id))).toBe('other body');
  });

  it('keeps a task that ran or that a replay handed out (kept)', async () => {
    const ran = randomUUID();
    await redis.hset(keys.task(ran), { status: 'working', seq: '2' });
    const replayed = randomUUID();
    await redis.hset(keys.task(replayed), { status: 'working', seq: '1', replayed: '1' });
    expect(await discard(ran)).toBe('kept');
    expect(await discard(replayed)).toBe('kept');
    expect(await redis.exists(keys.task(ran), keys.task(replayed))).toBe(2);
  });

  it('answers absent when there is no record', async () => {
    expect(await discard(randomUUID())).toBe('absent');
  });
});
