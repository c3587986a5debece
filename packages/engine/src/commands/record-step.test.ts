import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DurableStore } from '../durable-store.js';
import { taskKeys } from '../keys.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const keys = taskKeys(`test-${randomUUID()}`);
const durable = new DurableStore(redis, keys);

async function task(fields: Record<string, string> = {}): Promise<string> {
  const id = randomUUID();
  const base = { status: 'working', tenant: 't', msg: 'running', updated: '1', seq: '1' };
  await redis.hset(keys.task(id), { ...base, ...fields });
  return id;
}

describe('record-step', () => {
  it('stores a step once, as one event carrying it, and appends it to the steps', async () => {
    const id = await task();
    const first = await durable.recordStep(id, {
      name: 'a',
      value: '{"n":1}',
      message: 'step a completed',
    });
    expect(first).toEqual({ kind: 'ok', ready: false });
    const record = await redis.hgetall(keys.task(id));
    expect(record['st:a']).toBe('{"n":1}');
    const entry = { name: 'a', status: 'completed', endedAt: expect.any(Number) };
    expect(JSON.parse(record.s1!)).toEqual(entry);
    expect(JSON.parse(record.stail!)).toEqual([entry]);
    expect(record).toMatchObject({ sc: '1', scalls: '1', msg: 'step a completed', seq: '2' });
    // The event (2) carries the step it recorded; the record has no whole-list field.
    expect(JSON.parse(record.es2!)).toEqual(entry);
    expect(record).not.toHaveProperty('steps');
    // A second record of the same step keeps the first result: every run gets the same value.
    expect(await durable.recordStep(id, { name: 'a', value: '{"n":2}' })).toEqual({
      kind: 'exists',
      value: '{"n":1}',
    });
    expect(await redis.hget(keys.task(id), 'seq')).toBe('2');
    await durable.recordStep(id, { name: 'b', value: '2' });
    expect(await redis.hmget(keys.task(id), 'sc', 'scalls')).toEqual(['2', '2']);
    expect(JSON.parse((await redis.hget(keys.task(id), 'stail'))!)).toHaveLength(2);
  });

  it('keeps the newest 50 in the tail, and the same few fields written at step 1 000', async () => {
    const id = await task();
    for (let i = 1; i <= 60; i++) await durable.recordStep(id, { name: `s${i}`, value: '1' });
    const tail = JSON.parse((await redis.hget(keys.task(id), 'stail'))!) as { name: string }[];
    expect(tail.map((s) => s.name)).toEqual(Array.from({ length: 50 }, (_, i) => `s${i + 11}`));
    expect(await redis.hget(keys.task(id), 'sc')).toBe('60');
    expect(JSON.parse((await redis.hget(keys.task(id), 's1'))!)).toMatchObject({ name: 's1' });
  });

  it('cuts the oldest entry off the tail whatever its name holds', async () => {
    const id = await task();
    const odd = 'x},{"name":"y\\"},{"';
    await durable.recordStep(id, { name: odd, value: '1' });
    for (let i = 2; i <= 51; i++) await durable.recordStep(id, { name: `s${i}`, value: '1' });
    const tail = JSON.parse((await redis.hget(keys.task(id), 'stail'))!) as { name: string }[];
    expect(tail).toHaveLength(50);
    expect(tail[0]!.name).toBe('s2');
    const page = await durable.recordStep(id, { name: odd, value: '2' });
    expect(page).toEqual({ kind: 'exists', value: '1' });
    expect(JSON.parse((await redis.hget(keys.task(id), 's1'))!)).toMatchObject({ name: odd });
  });

  it('past maxSteps a ctx.step is refused (too-many); $-named steps are not counted', async () => {
    const id = await task();
    await durable.recordStep(id, { name: 'a', value: '1', maxSteps: 2 });
    await durable.recordStep(id, { name: '$sleep:1', value: '{}', maxSteps: 2 });
    await durable.recordStep(id, { name: 'b', value: '1', maxSteps: 2 });
    expect(await durable.recordStep(id, { name: 'c', value: '1', maxSteps: 2 })).toEqual({
      kind: 'tooMany',
      count: 2,
    });
    expect(await redis.hexists(keys.task(id), 'st:c')).toBe(0);
    // Not counted: a child batch or waitpoint still records, and a recorded step replays.
    expect(
      await durable.recordStep(id, { name: '$waitpoint:1', value: '{}', maxSteps: 2 }),
    ).toEqual({ kind: 'ok', ready: false });
    expect(await durable.recordStep(id, { name: 'a', value: '2', maxSteps: 2 })).toEqual({
      kind: 'exists',
      value: '1',
    });
    expect(await redis.hmget(keys.task(id), 'sc', 'scalls')).toEqual(['4', '2']);
  });

  it('a sleep is waiting until it ends, then completed when the run goes on past it', async () => {
    const id = await task();
    await durable.recordStep(id, { name: 'a', value: '1' });
    await durable.recordStep(id, { name: '$sleep:1', value: '{"until":9}', sleepUntil: 9e12 });
    const waiting = { name: '$sleep:1', status: 'waiting', until: 9e12 };
    expect(JSON.parse((await redis.hget(keys.task(id), 's2'))!)).toEqual(waiting);
    expect(await redis.hget(keys.task(id), 'sw')).toBe('2 $sleep:1');
    // Written when written: not the sleep's end.
    expect(Number(await redis.hget(keys.task(id), 'updated'))).toBeLessThanOrEqual(Date.now());
    // Another sleep's end changes nothing; this one's completes the entry, in the tail too.
    await durable.recordStep(id, { name: '', value: '', ended: '$sleep:7' });
    expect(await redis.hget(keys.task(id), 'sw')).toBe('2 $sleep:1');
    expect(await durable.recordStep(id, { name: '', value: '', ended: '$sleep:1' })).toEqual({
      kind: 'ok',
      ready: false,
    });
    const done = { name: '$sleep:1', status: 'completed', endedAt: expect.any(Number) };
    const record = await redis.hgetall(keys.task(id));
    expect(JSON.parse(record.s2!)).toEqual(done);
    expect(JSON.parse(record.stail!)[1]).toEqual(done);
    expect(JSON.parse(record[`es${record.seq}`]!)).toEqual(done);
    expect(record.sw).toBe('');
  });

  it("moves an older version's whole list into entries at its first step", async () => {
    const old = [
      { name: 'a', status: 'completed', endedAt: 1 },
      { name: 'b', status: 'completed', endedAt: 2 },
    ];
    const id = await task({ steps: JSON.stringify(old), 'st:a': '1', 'st:b': '2' });
    await durable.recordStep(id, { name: 'c', value: '3' });
    const record = await redis.hgetall(keys.task(id));
    expect(record).not.toHaveProperty('steps');
    expect(record.sc).toBe('3');
    expect([record.s1, record.s2].map((e) => JSON.parse(e!))).toEqual(old);
    expect(JSON.parse(record.stail!).map((e: { name: string }) => e.name)).toEqual(['a', 'b', 'c']);
  });

  it("a step that would pass the tenant's storage budget is refused (over-budget); one that fits counts", async () => {
    const usage = keys.usage('t');
    const now = Date.now();
    const bucket = `@${Math.ceil((now + 60_000) / 1000)}`;
    await redis.hset(usage, bucket, '100', '#total', '100');
    const id = await task({ ub: '100', created: String(now), ttl: '60000' });
    expect(await durable.recordStep(id, { name: 'a', value: '"xx"', maxBytes: 1000 })).toEqual({
      kind: 'ok',
      ready: false,
    });
    const [total, ub] = [
      Number(await redis.hget(usage, '#total')),
      await redis.hget(keys.task(id), 'ub'),
    ];
    expect(total).toBeGreaterThan(104);
    expect(Number(ub)).toBe(total);
    const big = JSON.stringify('x'.repeat(2000));
    const over = await durable.recordStep(id, { name: 'b', value: big, maxBytes: 1000 });
    expect(over).toEqual({
      kind: 'overBudget',
      usedBytes: total,
      retryAfterMs: expect.any(Number),
    });
    expect(await redis.hexists(keys.task(id), 'st:b')).toBe(0);
    // Without a budget it is counted, not refused.
    expect((await durable.recordStep(id, { name: 'b', value: big })).kind).toBe('ok');
    expect(Number(await redis.hget(usage, '#total'))).toBeGreaterThan(total + 2000);
    await redis.del(usage);
  });

  it('refuses a task that is not working, and answers missing when gone', async () => {
    const id = await task({ status: 'cancelled' });
    expect(await durable.recordStep(id, { name: 'a', value: '1' })).toEqual({
      kind: 'refused',
      current: 'cancelled',
    });
    expect(await redis.hexists(keys.task(id), 'st:a')).toBe(0);
    expect(await durable.recordStep(randomUUID(), { name: 'a', value: '1' })).toEqual({
      kind: 'missing',
    });
  });

  it('appends children, and a children wait is ready once all of them ended', async () => {
    const id = await task();
    await durable.recordStep(id, {
      name: '$children:1',
      value: '["c1","c2"]',
      children: ['c1', 'c2'],
    });
    expect(await redis.hmget(keys.task(id), 'children', 'ctotal')).toEqual(['["c1","c2"]', '2']);
    const waiting = await durable.recordStep(id, { name: '', value: '', wait: 'children' });
    expect(waiting).toEqual({ kind: 'ok', ready: false });
    expect(await redis.hget(keys.task(id), 'msg')).toBe('waiting for 2 of 2 child tasks');
    await redis.hset(keys.task(id), 'cdone', '2');
    expect(await durable.recordStep(id, { name: '', value: '', wait: 'children' })).toEqual({
      kind: 'ok',
      ready: true,
    });
    // A wait that is over at once says nothing new ("waiting for 0 of 2" would be untrue).
    expect(await redis.hget(keys.task(id), 'msg')).toBe('waiting for 2 of 2 child tasks');
  });

  it("a waitpoint wait is ready when the waitpoint's data is there", async () => {
    const id = await task({ 'st:$waitpoint:1': '{}' });
    const wait = { name: '', value: '', wait: 'wp:$waitpoint:1' };
    expect(await durable.recordStep(id, wait)).toEqual({ kind: 'ok', ready: false });
    expect(await redis.hget(keys.task(id), 'wait')).toBe('wp:$waitpoint:1');
    await redis.hset(keys.task(id), 'st:$waitpoint:1:data', '7');
    expect(await durable.recordStep(id, wait)).toEqual({ kind: 'ok', ready: true });
  });
});
