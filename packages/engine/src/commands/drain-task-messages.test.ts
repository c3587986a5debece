import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { FIELD } from '@longrun/core';
import { drainTaskMessages } from './drain-task-messages.js';

const redis = new Redis(inject('redisUrl'));
const prefix = `test-${randomUUID()}`;
const keys = { task: `${prefix}:task:t1`, messages: `${prefix}:messages:t1` };
afterAll(async () => {
  const all = await redis.keys(`${prefix}:*`);
  if (all.length > 0) await redis.del(...all);
  await redis.quit();
});

const drain = (tenant: string, op = randomUUID()) =>
  drainTaskMessages.run(redis, {
    keys: { ...keys, op: `${keys.messages}:op:${op}` },
    args: { tenant },
  });

describe('drain-task-messages', () => {
  it('refuses a missing task', async () => {
    expect(await drain('acme')).toEqual({ kind: 'absent' });
  });

  it('takes every message, oldest first, then finds none', async () => {
    await redis.hset(keys.task, FIELD.tenant, 'acme');
    await redis.rpush(keys.messages, 'a', 'b', 'c');
    expect(await drain('acme')).toEqual({ kind: 'ok', messages: ['a', 'b', 'c'] });
    expect(await redis.exists(keys.messages)).toBe(0);
    expect(await drain('acme')).toEqual({ kind: 'ok', messages: [] });
  });

  it("refuses another tenant's task, taking nothing", async () => {
    await redis.rpush(keys.messages, 'd');
    expect(await drain('other')).toEqual({ kind: 'absent' });
    expect(await redis.lrange(keys.messages, 0, -1)).toEqual(['d']);
  });

  it("drains an unbounded channel past Lua's unpack limit", async () => {
    await redis.del(keys.messages);
    const many = Array.from({ length: 10_000 }, (_, i) => String(i));
    await redis.rpush(keys.messages, ...many);
    const reply = await drain('acme', 'call-big');
    expect(reply).toEqual({ kind: 'ok', messages: many });
    expect(await drain('acme', 'call-big')).toEqual({ kind: 'ok', messages: many });
  });

  it('run again as the same call (same op key), answers what it took and takes no more', async () => {
    await redis.rpush(keys.messages, 'x', 'y');
    expect(await drain('acme', 'call-1')).toEqual({ kind: 'ok', messages: ['x', 'y'] });
    await redis.rpush(keys.messages, 'z');
    expect(await drain('acme', 'call-1')).toEqual({ kind: 'ok', messages: ['x', 'y'] });
    expect(await redis.lrange(keys.messages, 0, -1)).toEqual(['z']);
  });
});
