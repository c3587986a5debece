import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { FIELD } from '@longrun/core';
import { shiftTaskMessage } from './shift-task-message.js';

const redis = new Redis(inject('redisUrl'));
const prefix = `test-${randomUUID()}`;
const keys = { task: `${prefix}:task:t1`, messages: `${prefix}:messages:t1` };
afterAll(async () => {
  await redis.del(keys.task, keys.messages);
  await redis.quit();
});

const shift = (tenant: string) => shiftTaskMessage.run(redis, { keys, args: { tenant } });

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
});
