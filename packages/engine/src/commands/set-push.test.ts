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
const change = (id: string, op: 'set' | 'del', configId: string, tenant = 't') =>
  setPush.run(redis, {
    keys: { task: keys.task(id), usage: keys.usage('t') },
    args: { tenant, id, op, configId, config: op === 'set' ? config(configId) : '' },
  });

describe('set-push', () => {
  it('sets a config (ok), counts its bytes, refuses another id (taken), deletes it (ok)', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), { tenant: 't', status: 'working' });
    await redis.hset(keys.usage('t'), id, '10', '#total', '10');
    expect(await change(id, 'set', 'c1')).toBe('ok');
    expect(await redis.hget(keys.task(id), 'callback')).toBe(config('c1'));
    expect(await redis.hget(keys.usage('t'), id)).toBe(String(10 + config('c1').length));
    expect(await change(id, 'set', 'c2')).toEqual({ taken: 'c1' });
    expect(await change(id, 'del', 'c2')).toBe('absent');
    expect(await change(id, 'del', 'c1')).toBe('ok');
    expect(await redis.hexists(keys.task(id), 'callback')).toBe(0);
    expect(await redis.hget(keys.usage('t'), '#total')).toBe('10');
    expect(await change(id, 'del', 'c1')).toBe('absent');
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
