import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { FIELD } from '@longrun/core';
import { shiftTaskMessage } from './shift-task-message.js';

const redis = new Redis(inject('redisUrl'));
const prefix = `test-${randomUUID()}`;
const keys = { task: `${prefix}:task:t1`, messages: `${prefix}:messages:t1` };
afterAll(async () => {
  const all = await redis.keys(`${prefix}:*`);
  if (all.length > 0) await redis.del(...all);
  await redis.quit();
});

const shift = (tenant: string, op = randomUUID()) =>
  shiftTaskMessage.run(redis, {
    keys: { ...keys, op: `${keys.messages}:op:${op}` },
    args: { tenant },
  });

describe('shift-task-message', () => {
  it('refuses a missing task', async () => {
    expect(await shift('acme')).toEqual({ kind: 'absent' });
  });

  it('takes the oldest message first, then finds none', async () => {
    await redis.hset(keys.task, FIELD.tenant, 'acme');
    await redis.rpush(keys.messages, 'a', 'b');
    expect(await shift('acme')).toEqual({ kind: 'ok', message: 'a' });
    expect(await shift('acme')).toEqual({ kind: 'ok', message: 'b' });
    expect(await shift('acme')).toEqual({ kind: 'empty' });
  });

  it("refuses another tenant's task, taking nothing", async () => {
    await redis.rpush(keys.messages, 'c');
    expect(await shift('other')).toEqual({ kind: 'absent' });
    expect(await redis.lrange(keys.messages, 0, -1)).toEqual(['c']);
  });

  it('run again as the same call (same op key), answers what it took and takes no more', async () => {
    await redis.rpush(keys.messages, 'd');
    expect(await shift('acme', 'call-1')).toEqual({ kind: 'ok', message: 'c' });
    expect(await shift('acme', 'call-1')).toEqual({ kind: 'ok', message: 'c' });
    expect(await redis.lrange(keys.messages, 0, -1)).toEqual(['d']);
  });

  it('finding none leaves no answer: the same call, run again, takes what came since', async () => {
    await redis.del(keys.messages);
    expect(await shift('acme', 'call-2')).toEqual({ kind: 'empty' });
    await redis.rpush(keys.messages, 'e');
    expect(await shift('acme', 'call-2')).toEqual({ kind: 'ok', message: 'e' });
  });
});
