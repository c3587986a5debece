import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { taskKeys } from '../keys.js';
import { startTask } from './start-task.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const keys = taskKeys(`test-${randomUUID()}`);
const start = (id: string) =>
  startTask.run(redis, {
    keys: { task: keys.task(id), outbox: keys.outbox },
    args: { channel: keys.eventsChannel, id },
    items: [
      { keys: {}, args: { field: 'msg', value: 'running' } },
      { keys: {}, args: { field: 'started', value: '1' } },
    ],
  });

describe('start-task', () => {
  it('marks the task running as one event and returns its record, without its history', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), {
      status: 'working',
      tenant: 't',
      msg: 'queued',
      updated: '1',
      seq: '1',
    });
    const outcome = await start(id);
    expect(outcome).toEqual({
      kind: 'ok',
      hash: {
        status: 'working',
        tenant: 't',
        msg: 'running',
        updated: '1',
        seq: '2',
        started: '1',
      },
      steps: new Map(),
    });
    expect(await redis.hexists(keys.task(id), 'e1')).toBe(1);
  });

  it('reads a durable parent woken on its children without writing (issue 40)', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), {
      status: 'working',
      tenant: 't',
      msg: 'waiting for 2 of 3 child tasks',
      wait: 'children',
      seq: '4',
    });
    const outcome = await start(id);
    expect(outcome).toMatchObject({ kind: 'ok', hash: { msg: 'waiting for 2 of 3 child tasks' } });
    expect(await redis.hmget(keys.task(id), 'seq', 'e4')).toEqual(['4', null]);
  });

  it("returns a durable task's step results with it, by name (issue 29)", async () => {
    const id = randomUUID();
    const steps = JSON.stringify([
      { name: 'a', status: 'completed', endedAt: 1 },
      { name: '$sleep:1', status: 'completed', endedAt: 2 },
    ]);
    await redis.hset(keys.task(id), {
      status: 'working',
      tenant: 't',
      seq: '1',
      steps,
      'st:a': '{"x":1}',
      'st:$sleep:1': '{"until":2}',
    });
    const outcome = await start(id);
    expect(outcome.kind).toBe('ok');
    if (outcome.kind !== 'ok') return;
    expect([...outcome.steps]).toEqual([
      ['a', '{"x":1}'],
      ['$sleep:1', '{"until":2}'],
    ]);
    expect(outcome.hash).not.toHaveProperty('st:a');
  });

  it('returns the results its step entries name (issue 40), with an older list still there', async () => {
    const id = randomUUID();
    const entry = (name: string) => JSON.stringify({ name, status: 'completed', endedAt: 1 });
    await redis.hset(keys.task(id), {
      status: 'working',
      tenant: 't',
      seq: '1',
      sc: '2',
      s1: entry('a'),
      s2: entry('$waitpoint:1'),
      // An older worker's write after the move (a rolling upgrade): read too.
      steps: JSON.stringify([{ name: 'old', status: 'completed', endedAt: 1 }]),
      'st:a': '1',
      'st:$waitpoint:1': '{}',
      'st:old': '3',
    });
    const outcome = await start(id);
    if (outcome.kind !== 'ok') throw new Error(outcome.kind);
    expect([...outcome.steps]).toEqual([
      ['a', '1'],
      ['$waitpoint:1', '{}'],
      ['old', '3'],
    ]);
  });

  it('reads 2 500 entries (past what one unpack takes)', async () => {
    const id = randomUUID();
    const fields: Record<string, string> = { status: 'working', tenant: 't', seq: '1', sc: '2500' };
    for (let n = 1; n <= 2500; n++) {
      fields[`s${n}`] = JSON.stringify({ name: `s${n}`, status: 'completed', endedAt: 1 });
      fields[`st:s${n}`] = String(n);
    }
    await redis.hset(keys.task(id), fields);
    const outcome = await start(id);
    if (outcome.kind !== 'ok') throw new Error(outcome.kind);
    expect(outcome.steps.size).toBe(2500);
    expect(outcome.steps.get('s2500')).toBe('2500');
  });

  it('refuses a task that is not to be started (refused, current) and answers missing when gone', async () => {
    const id = randomUUID();
    await redis.hset(keys.task(id), { status: 'completed', tenant: 't', seq: '2' });
    expect(await start(id)).toEqual({ kind: 'refused', current: 'completed' });
    expect(await redis.hget(keys.task(id), 'seq')).toBe('2');
    expect(await start(randomUUID())).toEqual({ kind: 'missing' });
  });
});
