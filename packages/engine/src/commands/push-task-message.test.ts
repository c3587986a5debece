import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { FIELD } from '@longrun/core';
import { pushTaskMessage } from './push-task-message.js';

const redis = new Redis(inject('redisUrl'));
const listener = new Redis(inject('redisUrl'));
const prefix = `test-${randomUUID()}`;
const task = (id: string) => `${prefix}:task:${id}`;
const messages = (id: string) => `${prefix}:messages:${id}`;
const channel = `${prefix}:events:`;
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await Promise.all([redis.quit(), listener.quit()]);
});

const push = (id: string, tenant: string, message: string, max: number, op = randomUUID()) =>
  pushTaskMessage.run(redis, {
    keys: { task: task(id), messages: messages(id), op: `${messages(id)}:op:${op}` },
    args: { tenant, message, max, channel: channel + id },
  });

describe('push-task-message', () => {
  it("queues on the tenant's task, expiring with its record, and tells the task's channel", async () => {
    await redis.hset(task('t1'), FIELD.tenant, 'acme');
    await redis.pexpire(task('t1'), 60_000);
    const heard: string[] = [];
    await listener.subscribe(channel + 't1');
    listener.on('message', (ch: string) => heard.push(ch));
    expect(await push('t1', 'acme', '{"n":1}', 2)).toEqual({ kind: 'ok' });
    expect(await push('t1', 'acme', '{"n":2}', 2)).toEqual({ kind: 'ok' });
    expect(await redis.lrange(messages('t1'), 0, -1)).toEqual(['{"n":1}', '{"n":2}']);
    const ttl = await redis.pttl(messages('t1'));
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await expect.poll(() => heard).toEqual([channel + 't1', channel + 't1']);
  });

  it('refuses a full channel, writing nothing; no bound (0) queues', async () => {
    expect(await push('t1', 'acme', '{"n":3}', 2)).toEqual({ kind: 'full' });
    expect(await redis.llen(messages('t1'))).toBe(2);
    expect(await push('t1', 'acme', '{"n":3}', 0)).toEqual({ kind: 'ok' });
    expect(await redis.llen(messages('t1'))).toBe(3);
  });

  it("refuses another tenant's task and a missing one alike, writing nothing", async () => {
    expect(await push('t1', 'other', '{"x":1}', 0)).toEqual({ kind: 'absent' });
    expect(await redis.llen(messages('t1'))).toBe(3);
    expect(await push('t9', 'acme', '{"x":1}', 0)).toEqual({ kind: 'absent' });
    expect(await redis.exists(messages('t9'))).toBe(0);
  });

  it('leaves the list without expiry when the record has none', async () => {
    await redis.hset(task('t2'), FIELD.tenant, 'acme');
    expect(await push('t2', 'acme', '{}', 0)).toEqual({ kind: 'ok' });
    expect(await redis.pttl(messages('t2'))).toBe(-1);
  });

  it('run again as the same call (same op key), queues nothing more and answers ok', async () => {
    await redis.hset(task('t3'), FIELD.tenant, 'acme');
    expect(await push('t3', 'acme', '"once"', 0, 'call-1')).toEqual({ kind: 'ok' });
    expect(await push('t3', 'acme', '"once"', 0, 'call-1')).toEqual({ kind: 'ok' });
    expect(await redis.lrange(messages('t3'), 0, -1)).toEqual(['"once"']);
    const kept = await redis.pttl(`${messages('t3')}:op:call-1`);
    expect(kept).toBeGreaterThan(290_000);
    expect(kept).toBeLessThanOrEqual(300_000);
  });

  it('a refusal leaves no answer: the same call, run again with room, queues', async () => {
    await redis.hset(task('t4'), FIELD.tenant, 'acme');
    await redis.rpush(messages('t4'), '"x"');
    expect(await push('t4', 'acme', '"y"', 1, 'call-2')).toEqual({ kind: 'full' });
    expect(await redis.exists(`${messages('t4')}:op:call-2`)).toBe(0);
    await redis.del(messages('t4'));
    expect(await push('t4', 'acme', '"y"', 1, 'call-2')).toEqual({ kind: 'ok' });
    expect(await redis.lrange(messages('t4'), 0, -1)).toEqual(['"y"']);
  });
});
