import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { taskKeys } from '../keys.js';
import { setPush } from './set-push.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const keys = taskKeys(`test-${randomUUID()}`);
const config = (configId: string) =>
  JSON.stringify({ id: configId, format: 'a2a', url: 'http://x' });
const change = (id: string, op: 'set' | 'del', configId: string, tenant = 't', max = 10) =>
  setPush.run(redis, {
    keys: { task: keys.task(id), usage: keys.usage('t') },
    args: { tenant, id, op, configId, config: op === 'set' ? config(configId) : '', max },
  });
const stored = async (id: string) =>
  JSON.parse((await redis.hget(keys.task(id), 'callback')) ?? 'null') as unknown;

describe('set-push', () => {
  it('keeps several configs by id: adds, replaces the same id, deletes one, counts the bytes', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), { tenant: 't', status: 'working' });
    await redis.hset(keys.usage('t'), id, '10', '#total', '10');
    expect(await change(id, 'set', 'c1')).toBe('ok');
    expect(await change(id, 'set', 'c2')).toBe('ok');
    expect(await stored(id)).toEqual([JSON.parse(config('c1')), JSON.parse(config('c2'))]);
    const bytes = ((await redis.hget(keys.task(id), 'callback')) ?? '').length;
    expect(await redis.hget(keys.usage('t'), id)).toBe(String(10 + bytes));
    expect(await change(id, 'set', 'c1')).toBe('ok'); // the same id replaces, adds nothing
    expect(await stored(id)).toHaveLength(2);
    expect(await change(id, 'del', 'c3')).toBe('absent');
    expect(await change(id, 'del', 'c1')).toBe('ok');
    expect(await stored(id)).toEqual([JSON.parse(config('c2'))]);
    expect(await change(id, 'del', 'c2')).toBe('ok');
    expect(await redis.hexists(keys.task(id), 'callback')).toBe(0);
    expect(await redis.hget(keys.usage('t'), '#total')).toBe('10');
    expect(await change(id, 'del', 'c1')).toBe('absent');
  });

  it('refuses a config past max (full), and reads the one config older records keep', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), { tenant: 't', callback: config('old') });
    expect(await change(id, 'set', 'c1', 't', 2)).toBe('ok');
    expect(await stored(id)).toEqual([JSON.parse(config('old')), JSON.parse(config('c1'))]);
    expect(await change(id, 'set', 'c2', 't', 2)).toEqual({ full: 2 });
    expect(await change(id, 'set', 'c1', 't', 2)).toBe('ok'); // a replacement still fits
    expect(await change(id, 'del', 'old')).toBe('ok');
  });

  it("never changes a longrun webhook (callback), nor another tenant's task (missing)", async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), { tenant: 't', callback: '{"url":"http://hook"}' });
    expect(await change(id, 'set', 'c1')).toBe('callback');
    expect(await change(id, 'del', 'c1')).toBe('absent');
    expect(await change(id, 'set', 'c1', 'other')).toBe('missing');
    expect(await change(randomUUID(), 'set', 'c1')).toBe('missing');
    expect(await redis.hget(keys.task(id), 'callback')).toBe('{"url":"http://hook"}');
  });
});
