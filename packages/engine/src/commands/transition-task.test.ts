import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { taskKeys } from '../keys.js';
import { transitionTask } from './transition-task.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

async function setUp(fields: Record<string, string> = {}) {
  const keys = taskKeys(`test-${randomUUID()}`);
  const id = randomUUID();
  const base = { status: 'working', tenant: 't', msg: 'queued', updated: '1', seq: '1' };
  await redis.hset(keys.task(id), { ...base, ...fields });
  await redis.zadd(keys.openTasks('t'), Date.now() + 60_000, id);
  const run = (
    event: string,
    changes: Record<string, string>,
    extra: { append?: string; expectSeq?: string; op?: string } = {},
  ) =>
    transitionTask.run(redis, {
      keys: { task: keys.task(id), outbox: keys.outbox },
      args: {
        event,
        append: extra.append ?? '',
        channel: keys.eventsChannel,
        id,
        openPrefix: keys.tenantPrefix,
        expectSeq: extra.expectSeq ?? '',
        op: extra.op ?? '',
      },
      items: Object.entries(changes).map(([field, value]) => ({
        keys: {},
        args: { field, value },
      })),
    });
  return { keys, id, run };
}

describe('transition-task', () => {
  it('writes the fields as one event (ok, previous status, event id), the old state kept as e1', async () => {
    const { keys, id, run } = await setUp();
    expect(await run('park', { status: 'input_required', msg: 'q1' })).toEqual({
      ok: true,
      previous: 'working',
      eventId: '2',
    });
    const record = await redis.hgetall(keys.task(id));
    expect(record).toMatchObject({ status: 'input_required', msg: 'q1', seq: '2' });
    expect(JSON.parse(record.e1 ?? '')).toEqual({ s: 1, st: 'working', m: 'queued', u: 1 });
  });

  it('appends an answer to the inputs, and takes a terminal task out of the open set', async () => {
    const { keys, id, run } = await setUp({ status: 'input_required', inputs: '[1]' });
    expect((await run('answer', { status: 'working' }, { append: '{"ok":true}' })).ok).toBe(true);
    expect(await redis.hget(keys.task(id), 'inputs')).toBe('[1,{"ok":true}]');
    expect(await redis.zscore(keys.openTasks('t'), id)).not.toBeNull();
    expect((await run('cancel', { status: 'cancelled' })).ok).toBe(true);
    expect(await redis.zscore(keys.openTasks('t'), id)).toBeNull();
  });

  it('refuses an event whose row does not apply to the status (refused, current)', async () => {
    const { keys, id, run } = await setUp({ status: 'completed' });
    expect(await run('progress', { progress: '5' })).toEqual({
      ok: false,
      reason: 'refused',
      current: 'completed',
    });
    expect(await run('answer', { status: 'working' })).toMatchObject({ reason: 'refused' });
    expect(await redis.hget(keys.task(id), 'seq')).toBe('1');
  });

  it('refuses when a change was recorded since expectSeq (changed), and applies at that seq', async () => {
    const { run } = await setUp();
    expect(await run('progress', { progress: '1' }, { expectSeq: '0' })).toEqual({
      ok: false,
      reason: 'changed',
      current: 'working',
    });
    expect((await run('progress', { progress: '1' }, { expectSeq: '1' })).ok).toBe(true);
  });

  it('run again as the same call (op), answers as it did; another call is refused', async () => {
    const { keys, id, run } = await setUp({ status: 'input_required', inputs: '[]', seq: '4' });
    const answer = () =>
      run('answer', { status: 'working' }, { append: '{"ok":true}', expectSeq: '4', op: 'call-1' });
    const first = await answer();
    expect(first).toEqual({ ok: true, previous: 'input_required', eventId: '5' });
    expect(await redis.hget(keys.task(id), 'op')).toBe('call-1 input_required 5');
    // A later change (progress) leaves the note: the call is still told what it did.
    expect((await run('progress', { progress: '10' })).ok).toBe(true);
    expect(await answer()).toEqual(first);
    expect(await redis.hget(keys.task(id), 'inputs')).toBe('[{"ok":true}]');
    expect(await redis.hget(keys.task(id), 'seq')).toBe('6');
    expect(
      await run('answer', { status: 'working' }, { append: '1', expectSeq: '4', op: 'call-2' }),
    ).toEqual({ ok: false, reason: 'refused', current: 'working' });
    // Without an op nothing is noted, and a second run is refused as before.
    expect((await run('cancel', { status: 'cancelled' })).ok).toBe(true);
    expect(await redis.hget(keys.task(id), 'op')).toBe('call-1 input_required 5');
    expect(await run('cancel', { status: 'cancelled' })).toEqual({
      ok: false,
      reason: 'refused',
      current: 'cancelled',
    });
  });

  it('a completion run again answers ok for its own result; refused for another', async () => {
    const { run } = await setUp();
    const complete = (result: string) => run('complete', { status: 'completed', result });
    expect(await complete('{"n":1}')).toEqual({ ok: true, previous: 'working', eventId: '2' });
    expect(await complete('{"n":1}')).toEqual({ ok: true, previous: 'completed', eventId: '2' });
    expect(await complete('{"n":2}')).toEqual({
      ok: false,
      reason: 'refused',
      current: 'completed',
    });
  });

  it('answers missing for a task that is gone', async () => {
    const { keys } = await setUp();
    const gone = await transitionTask.run(redis, {
      keys: { task: keys.task(randomUUID()), outbox: keys.outbox },
      args: {
        event: 'cancel',
        append: '',
        channel: 'c',
        id: 'x',
        openPrefix: keys.tenantPrefix,
        expectSeq: '',
      },
    });
    expect(gone).toEqual({ ok: false, reason: 'missing' });
  });

  it('errors on an event core does not know', async () => {
    const { run } = await setUp();
    await expect(run('explode', {})).rejects.toThrow(/unknown lifecycle event/);
  });
});
