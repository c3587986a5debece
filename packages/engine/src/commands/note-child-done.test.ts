import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DurableStore } from '../durable-store.js';
import { taskKeys } from '../keys.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const keys = taskKeys(`test-${randomUUID()}`);
const durable = new DurableStore(redis, keys);

describe('note-child-done', () => {
  it('counts each child once and wakes the waiting parent at the last', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), {
      status: 'working',
      tenant: 't',
      ctotal: '2',
      wait: 'children',
    });
    expect(await durable.noteChildDone(id, 'c1')).toBe('wait');
    expect(await durable.noteChildDone(id, 'c1')).toBe('wait'); // told twice: counted once
    expect(await redis.hget(keys.task(id), 'cdone')).toBe('1');
    expect(await durable.noteChildDone(id, 'c2')).toBe('wake');
    expect(await redis.hget(keys.task(id), 'cdone')).toBe('2');
  });

  it('does not wake a parent that does not wait on its children, or a finished one', async () => {
    const running = randomUUID();
    await redis.hset(keys.task(running), { status: 'working', tenant: 't', ctotal: '1' });
    expect(await durable.noteChildDone(running, 'c1')).toBe('wait');
    const finished = randomUUID();
    await redis.hset(keys.task(finished), {
      status: 'cancelled',
      tenant: 't',
      ctotal: '1',
      wait: 'children',
    });
    expect(await durable.noteChildDone(finished, 'c1')).toBe('wait');
    expect(await durable.noteChildDone(randomUUID(), 'c1')).toBe('missing');
  });
});
