import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { LIFECYCLE, toHandle, type TaskRecord } from '@longrun/core';
import { CompletionBatch, CreateBatch, TaskLog, TaskStore } from '@longrun/engine/internal';
import { newRecord } from './helpers/records.js';
import { uniquePrefix } from './helpers/service.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const record = () => newRecord();

describe('TaskStore.create', () => {
  it('stores any string the input may hold exactly (the fields travel to Redis as one JSON array)', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const log = new TaskLog(redis, store.keys);
    const input = {
      quotes: 'say "hi" \\ back\\slash',
      controls: '\u0000\u0001\n\t\u001f',
      lone: '\ud800 and \udfff',
      emoji: '👩‍💻 héllo ✓',
      escapes: '\\u0041 is not A',
      nested: { array: [1, 'two', null, { deep: true }] },
    };
    const task = record();
    task.input = input;
    task.callback = { url: 'https://example.test/a?b="c"', secret: 's'.repeat(16) };
    expect(await store.create(task)).toEqual({ created: true });
    const stored = await store.get(task.id);
    expect(stored?.input).toEqual(JSON.parse(JSON.stringify(input)));
    expect(stored?.callback).toEqual(task.callback);
    expect(stored).toMatchObject({ tenant: 't', type: 'echo', status: 'working', ttlMs: 60_000 });
    expect(await log.lastEvent(task.id)).toMatchObject({ id: '1', status: 'working' });
  });
});

describe('TaskStore.create, what it stores', () => {
  it('leaves out the fields that hold their defaults; the record reads the same', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const [plain, keyed] = [record(), record()];
    await store.create(plain);
    const claim = { key: store.keys.idempotency('t', 'k'), value: `${keyed.id} h` };
    await store.create(keyed, claim);
    const fields = Object.keys(await redis.hgetall(store.keys.task(plain.id))).sort();
    expect(fields).toEqual(
      ['created', 'input', 'msg', 'seq', 'status', 'tenant', 'ttl', 'type', 'updated'].sort(),
    );
    expect(await redis.hget(store.keys.task(keyed.id), 'idem')).toBe(claim.key);
    expect(await store.get(plain.id)).toEqual(plain);
    expect(await store.get(keyed.id)).toEqual(keyed);
    // Set later, they are written then.
    await store.transition(plain.id, 'cancel', { cancelRequested: true });
    expect((await store.get(plain.id))?.cancelRequested).toBe(true);
  });
});

describe('TaskStore.createMany under fair share', () => {
  it("gives each tenant's tasks their turns, within one call and from one call to the next", async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const fair = {
      key: store.keys.fairShare('tasks'),
      head: `${store.keys.tenantPrefix}none:prioritized`, // an empty queue: the clock is at 0
      step: 1,
      offset: 0,
    };
    const call = (tenants: string[]) =>
      store.createMany(tenants.map((tenant) => ({ record: newRecord({ tenant }), fair })));
    const turns = (outcomes: { created: boolean; priority?: number }[]) =>
      outcomes.map((o) => o.priority);
    expect(turns(await call(['a', 'a', 'b', 'a', 'b']))).toEqual([1, 2, 1, 3, 2]);
    expect(turns(await call(['b', 'a', 'c']))).toEqual([3, 4, 1]);
    // Half the weight: two steps per task.
    const heavy = { ...fair, step: 2 };
    const last = await store.createMany([
      { record: newRecord({ tenant: 'd' }), fair: heavy },
      { record: newRecord({ tenant: 'd' }), fair: heavy },
    ]);
    expect(turns(last)).toEqual([2, 4]);
  });
});

describe('TaskStore.createMany and CreateBatch', () => {
  it('creates several tasks in one call, each in order, with its own idempotency claim and cap', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const log = new TaskLog(redis, store.keys);
    const [a, b, c, d, e] = [
      record(),
      record(),
      record(),
      newRecord({ tenant: 'capped' }),
      newRecord({ tenant: 'capped' }),
    ];
    const claim = (id: string) => ({ key: store.keys.idempotency('t', 'k1'), value: `${id} h` });
    const outcomes = await store.createMany([
      { record: a },
      { record: b, idempotency: claim(b.id) },
      { record: c, idempotency: claim(c.id) }, // the same key, claimed by b just before
      { record: d, maxOpenTasks: 1 },
      { record: e, maxOpenTasks: 1 }, // d, created just before, fills the cap
    ]);
    expect(outcomes).toEqual([
      { created: true },
      { created: true },
      { created: false, idempotencyValue: `${b.id} h` },
      { created: true },
      { created: false, full: true, openTasks: 1 },
    ]);
    for (const t of [a, b, d]) {
      expect(await store.get(t.id)).toMatchObject({
        id: t.id,
        tenant: t.tenant,
        status: 'working',
      });
      expect(await log.lastEvent(t.id)).toMatchObject({ id: '1', status: 'working' });
    }
    for (const t of [c, e]) expect(await redis.exists(store.keys.task(t.id))).toBe(0);
    expect(await redis.zcard(store.keys.index('t'))).toBe(2);
    expect(await redis.zrange(store.keys.openTasks('capped'), 0, -1)).toEqual([d.id]);
  });

  it('sends the creates asked for in one turn together, a lone one alone, the record before what follows', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const calls: number[] = [];
    const many = store.createMany.bind(store);
    // The real store, counted: how many creates travel in each call.
    store.createMany = (items) => {
      calls.push(items.length);
      return many(items);
    };
    const batch = new CreateBatch(store);
    const tasks = Array.from({ length: 5 }, record);
    const pending = tasks.map((t) => batch.create({ record: t }));
    let answered = false;
    void Promise.all(pending.map((p) => p.outcome)).then(() => (answered = true));
    // `written` comes before the answer; a command sent after it on the same connection (as the
    // submit's job is) runs after the create in Redis.
    await Promise.all(pending.map((p) => p.written));
    expect(answered).toBe(false);
    const statuses = await Promise.all(
      tasks.map((t) => redis.hget(store.keys.task(t.id), 'status')),
    );
    expect(statuses).toEqual(Array(5).fill('working'));
    expect(await Promise.all(pending.map((p) => p.outcome))).toEqual(
      Array(5).fill({ created: true }),
    );
    expect(calls).toEqual([5]);
    const lone = record();
    expect(await batch.create({ record: lone }).outcome).toEqual({ created: true });
    expect(calls).toEqual([5]); // a single create goes out as the plain script
    expect((await store.get(lone.id))?.status).toBe('working');
  });

  it('fails every create of a call that failed, and sends none again', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const batch = new CreateBatch(store);
    const [a, b] = [record(), newRecord({ tenant: 'other' })];
    await redis.set(store.keys.index('other'), 'not a sorted set', 'EX', 60); // WRONGTYPE for b
    const settled = await Promise.allSettled(
      [a, b].map((t) => batch.create({ record: t }).outcome),
    );
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    // a was written before the script stopped at b: its submit takes it back (TaskService does).
    expect(await redis.hget(store.keys.task(a.id), 'status')).toBe('working');
    expect(await redis.exists(store.keys.events(b.id))).toBe(0);
  });
});

describe('TaskStore.peek', () => {
  it('reads what a handle shows, the same handle as the whole record gives, without the input', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const big = { blob: 'x'.repeat(200_000) };
    const [working, done, failed, asking, gone] = [
      newRecord({
        input: big,
        callback: { url: 'https://example.test/h', secret: 's'.repeat(16) },
      }),
      record(),
      record(),
      record(),
      record(),
    ];
    for (const t of [working, done, failed, asking]) await store.create(t);
    await store.transition(working.id, 'progress', {
      progress: { step: 2, of: 3 },
      statusMessage: 'step 2',
    });
    await store.transition(done.id, 'complete', { statusMessage: 'done', result: { n: 1 } });
    await store.transition(failed.id, 'fail', { error: { message: 'boom' } });
    await store.transition(asking.id, 'park', {
      statusMessage: 'approve?',
      awaitingInput: true,
      inputRequest: { message: 'approve?', schema: { type: 'boolean' } },
    });
    for (const t of [working, done, failed, asking]) {
      const view = await store.peek(t.id);
      const whole = await store.get(t.id);
      expect(view).not.toBeNull();
      expect(toHandle(view!, 1000)).toEqual(toHandle(whole!, 1000));
      expect(view!.tenant).toBe('t');
      expect(view).not.toHaveProperty('input');
      expect(view).not.toHaveProperty('inputs');
      expect(view).not.toHaveProperty('callback');
    }
    expect(toHandle((await store.peek(done.id))!, 1000).result).toEqual({ n: 1 });
    expect(await store.peek(gone.id)).toBeNull();
  });
});

describe('TaskStore event list', () => {
  it('numbers events 1, 2, … and reads after any id, also once the oldest were trimmed', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const log = new TaskLog(redis, store.keys);
    const task = record();
    await store.create(task);
    for (let i = 1; i <= 1004; i++) await store.transition(task.id, 'progress', { progress: i });
    // 1 (create) + 1 004 progress events = 1 005; the list keeps the newest 1 000: 6 … 1 005.
    expect((await log.lastEvent(task.id))?.id).toBe('1005');
    const oldest = await log.events(task.id, undefined, 3);
    expect(oldest.map((e) => e.id)).toEqual(['6', '7', '8']);
    expect(oldest[0]?.progress).toBe(5);
    expect((await log.events(task.id, '0', 1))[0]?.id).toBe('6'); // trimmed ones are skipped
    expect((await log.events(task.id, '1002')).map((e) => e.id)).toEqual(['1003', '1004', '1005']);
    expect(await log.events(task.id, '1005')).toEqual([]);
    expect((await log.event(task.id, '500'))?.progress).toBe(499);
    expect(await log.event(task.id, '3')).toBeNull();
    // The history is the record's (decision 57): no other key, and it expires with the task.
    expect(await redis.exists(store.keys.events(task.id))).toBe(0);
    expect(await redis.hexists(store.keys.task(task.id), 'e5')).toBe(0);
    expect(await redis.hexists(store.keys.task(task.id), 'e6')).toBe(1);
    // The record's own fields are read without its history.
    expect(Object.keys((await store.get(task.id))!)).not.toContain('e6');
  });

  it('keeps a small task small: its history adds a field per event to the record, no key', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const log = new TaskLog(redis, store.keys);
    const task = record();
    await store.create(task);
    const created = Number(await redis.call('MEMORY', 'USAGE', store.keys.task(task.id)));
    await store.transition(task.id, 'start');
    await store.transition(task.id, 'complete', { result: { ok: true } });
    const keys = await redis.keys(`${store.keys.task('').slice(0, -':task:'.length)}*`);
    expect(keys.filter((k) => k.includes(task.id))).toEqual([store.keys.task(task.id)]);
    const bytes = Number(await redis.call('MEMORY', 'USAGE', store.keys.task(task.id)));
    expect(bytes - created).toBeLessThan(300);
    const events = await log.events(task.id, undefined);
    expect(events.map((e) => [e.id, e.status])).toEqual([
      ['1', 'working'],
      ['2', 'working'],
      ['3', 'completed'],
    ]);
  });
});

describe('TaskStore event 1', () => {
  const setUp = () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    return { store, log: new TaskLog(redis, store.keys) };
  };
  const created = (task: TaskRecord) => ({
    id: '1',
    status: 'working',
    statusMessage: task.statusMessage,
    updatedAt: task.updatedAt,
  });

  it('is read off the record until the first change: a create writes no event list', async () => {
    const { store, log } = setUp();
    const task = newRecord({ statusMessage: 'scheduled', progress: { step: 'none yet' } });
    await store.create(task);
    expect(await redis.exists(store.keys.events(task.id))).toBe(0);
    const first = { ...created(task), progress: { step: 'none yet' } };
    expect(await log.events(task.id, undefined)).toEqual([first]);
    expect(await log.events(task.id, '0')).toEqual([first]);
    expect(await log.events(task.id, '1')).toEqual([]);
    expect(await log.events(task.id, undefined, 0)).toEqual([]);
    expect(await log.lastEvent(task.id)).toEqual(first);
    expect(await log.event(task.id, '1')).toEqual(first);
    expect(await log.event(task.id, '2')).toBeNull();
    // A task that is gone has no events, listed or not.
    expect(await log.lastEvent(randomUUID())).toBeNull();
    expect(await log.events(randomUUID(), undefined)).toEqual([]);
  });

  it.each([
    ['a start', (store: TaskStore, id: string) => store.start(id)],
    ['a transition', (store: TaskStore, id: string) => store.transition(id, 'cancel')],
    ['a completion', (store: TaskStore, id: string) => store.completeMany([{ id, result: 1 }])],
  ])(
    'is written by the first change, %s, into the record, before its own event',
    async (_, change) => {
      const { store, log } = setUp();
      const task = newRecord({ statusMessage: 'queued: waiting for a worker' });
      await store.create(task);
      await change(store, task.id);
      const events = await log.events(task.id, undefined);
      expect(events[0]).toEqual(created(task));
      expect(events.map((e) => e.id)).toEqual(['1', '2']);
      expect(events[1]?.statusMessage).not.toBe(task.statusMessage);
      // One representation (decision 57): event 1 is a field of the record, which expires with it.
      expect(await redis.exists(store.keys.events(task.id))).toBe(0);
      expect(await redis.hexists(store.keys.task(task.id), 'e1')).toBe(1);
    },
  );

  it('stays in the record when a completion is the first change: events 1 and 2 read from it', async () => {
    const { store, log } = setUp();
    const task = newRecord({ statusMessage: 'queued: waiting for a worker', progress: { at: 1 } });
    await store.create(task);
    const [outcome] = await store.completeMany([{ id: task.id, result: { x: 1 } }]);
    expect(outcome).toEqual({ ok: true, previous: 'working', eventId: '2' });
    expect(await redis.exists(store.keys.events(task.id))).toBe(0);
    const first = { ...created(task), progress: { at: 1 } };
    const events = await log.events(task.id, undefined);
    expect(events[0]).toEqual(first);
    expect(events[1]).toMatchObject({ id: '2', status: 'completed', progress: { at: 1 } });
    expect(events[1]?.updatedAt).toBeGreaterThanOrEqual(task.updatedAt);
    expect(await log.events(task.id, '1')).toEqual([events[1]]);
    expect(await log.events(task.id, '0', 1)).toEqual([first]);
    expect(await log.events(task.id, '2')).toEqual([]);
    expect(await log.lastEvent(task.id)).toEqual(events[1]);
    expect(await log.event(task.id, '1')).toEqual(first);
    expect(await log.event(task.id, '2')).toEqual(events[1]);
    // The record is what it would be with a list, less the list.
    expect((await store.get(task.id))?.status).toBe('completed');
  });

  it('stays in the record when a completion follows a start (the run was marked running)', async () => {
    const { store, log } = setUp();
    const task = newRecord();
    await store.create(task);
    await store.start(task.id);
    await store.completeMany([{ id: task.id, result: 1 }]);
    expect(await redis.exists(store.keys.events(task.id))).toBe(0);
    const events = await log.events(task.id, undefined);
    expect(events.map((e) => [e.id, e.statusMessage])).toEqual([
      ['1', task.statusMessage],
      ['2', 'running'],
      ['3', 'completed'],
    ]);
    expect(await log.events(task.id, '1', 1)).toEqual([events[1]]);
    expect(await log.lastEvent(task.id)).toEqual(events[2]);
  });

  it('is not written twice for a task whose create wrote the list (an older version)', async () => {
    const { store, log } = setUp();
    const task = record();
    await store.create(task);
    const entry = { s: 1, st: 'working', m: task.statusMessage, u: task.updatedAt };
    await redis.rpush(store.keys.events(task.id), JSON.stringify(entry));
    expect((await store.transition(task.id, 'start')).ok).toBe(true);
    const events = await log.events(task.id, undefined);
    expect(events.map((e) => e.id)).toEqual(['1', '2']);
    expect(events[0]).toEqual(created(task));
  });

  // A rolling upgrade (decision 57): what the previous version wrote is read until it expires.
  const entry = (s: number, st: string, m: string, u: number) => JSON.stringify({ s, st, m, u });

  it('reads a task of the previous version: its list (events 1..n), then changes made since', async () => {
    const { store, log } = setUp();
    const task = record();
    await store.create(task);
    // As the previous version left it after a start: list [1, 2], the record at event 2.
    await redis.rpush(
      store.keys.events(task.id),
      entry(1, 'working', task.statusMessage, task.updatedAt),
      entry(2, 'working', 'running', task.updatedAt + 1),
    );
    await redis.hset(store.keys.task(task.id), {
      seq: '2',
      msg: 'running',
      updated: String(task.updatedAt + 1),
    });
    expect((await log.events(task.id, undefined)).map((e) => [e.id, e.statusMessage])).toEqual([
      ['1', task.statusMessage],
      ['2', 'running'],
    ]);
    // This version completes it: event 2 goes to the record as any, the old list stays.
    await store.completeMany([{ id: task.id, result: 1 }]);
    const events = await log.events(task.id, undefined);
    expect(events.map((e) => [e.id, e.statusMessage])).toEqual([
      ['1', task.statusMessage],
      ['2', 'running'],
      ['3', 'completed'],
    ]);
    expect(await log.events(task.id, '1')).toEqual(events.slice(1));
    expect(await log.event(task.id, '2')).toEqual(events[1]);
    expect(await log.lastEvent(task.id)).toEqual(events[2]);
    // Forgetting it deletes the old list too.
    expect((await store.forget(task)).ok).toBe(true);
    expect(await redis.exists(store.keys.events(task.id))).toBe(0);
  });

  it("reads a task the previous version finished by its first change (event 1 in 'e1')", async () => {
    const { store, log } = setUp();
    const task = record();
    await store.create(task);
    await redis.hset(store.keys.task(task.id), {
      e1: entry(1, 'working', task.statusMessage, task.updatedAt),
      seq: '2',
      status: 'completed',
      msg: 'completed',
    });
    const events = await log.events(task.id, undefined);
    expect(events.map((e) => [e.id, e.status])).toEqual([
      ['1', 'working'],
      ['2', 'completed'],
    ]);
    expect(events[0]).toEqual(created(task));
  });
});

describe('TaskStore.completeMany and CompletionBatch', () => {
  it('completes several tasks in one call, each guarded, with its own result and outcome', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const log = new TaskLog(redis, store.keys);
    const [a, b, c, d] = [record(), record(), record(), record()];
    await store.create(a);
    await store.create(b);
    await store.create(d);
    await store.transition(b.id, 'cancel');
    await store.transition(d.id, 'progress', { progress: 50 });
    const outcomes = await store.completeMany([
      { id: a.id, result: { x: 1 } },
      { id: b.id, result: 2 },
      { id: c.id, result: null }, // never created
      { id: d.id, result: undefined },
      { id: a.id, result: 'again' }, // a is terminal by now
    ]);
    expect(outcomes).toEqual([
      { ok: true, previous: 'working', eventId: '2' },
      { ok: false, reason: 'refused', current: 'cancelled' },
      { ok: false, reason: 'missing' },
      { ok: true, previous: 'working', eventId: '3' },
      { ok: false, reason: 'refused', current: 'completed' },
    ]);
    const doneA = await store.get(a.id);
    expect(doneA).toMatchObject({
      status: 'completed',
      statusMessage: 'completed',
      result: { x: 1 },
    });
    expect(doneA!.updatedAt).toBeGreaterThanOrEqual(a.updatedAt);
    expect((await store.get(b.id))?.status).toBe('cancelled');
    expect((await store.get(b.id))?.result).toBeUndefined();
    expect(await redis.exists(store.keys.task(c.id))).toBe(0);
    expect((await store.get(d.id))?.result).toBeNull();
    // The event is built from the fields written: status, message, and the numeric progress
    // finished at 100 (issue 27).
    const last = await log.lastEvent(d.id);
    expect(last).toMatchObject({
      id: '3',
      status: 'completed',
      statusMessage: 'completed',
      progress: 100,
    });
    expect((await log.lastEvent(a.id))?.status).toBe('completed');
    // Terminal tasks leave the tenant's open set.
    expect(await redis.zscore(store.keys.openTasks('t'), a.id)).toBeNull();
  });

  it('finishes a numeric progress at 100 on every completion path; an object progress is kept', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const log = new TaskLog(redis, store.keys);
    // Lazy (the completion is the first change), listed (after a progress report), the plain
    // transition script (a lone completion), and a handler's own object shape.
    const lazy = newRecord({ progress: 75 });
    const [listed, single, shaped, none] = [record(), record(), record(), record()];
    for (const t of [lazy, listed, single, shaped, none]) await store.create(t);
    await store.transition(listed.id, 'progress', { progress: 75 });
    await store.transition(single.id, 'progress', { progress: 75 });
    await store.transition(shaped.id, 'progress', { progress: { done: 3, of: 4 } });
    await store.completeMany([
      { id: lazy.id, result: 1 },
      { id: listed.id, result: 2 },
      { id: shaped.id, result: 3 },
      { id: none.id, result: 4 },
    ]);
    await new CompletionBatch(store).complete(single.id, 5).outcome;
    for (const t of [lazy, listed, single]) {
      const handle = toHandle((await store.peek(t.id))!, 1000);
      expect(handle, t.id).toMatchObject({ status: 'completed', progress: 100 });
      expect((await log.lastEvent(t.id))?.progress, t.id).toBe(100);
    }
    expect(toHandle((await store.peek(shaped.id))!, 1000).progress).toEqual({ done: 3, of: 4 });
    // A task that never reported progress does not grow one.
    expect(toHandle((await store.peek(none.id))!, 1000).progress).toBeUndefined();
  });

  it('sends the completions asked for in one turn together, a lone one alone', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const calls: number[] = [];
    const many = store.completeMany.bind(store);
    // The real store, counted: how many completions travel in each call.
    store.completeMany = (items) => {
      calls.push(items.length);
      return many(items);
    };
    const batch = new CompletionBatch(store);
    const tasks = Array.from({ length: 5 }, record);
    for (const t of tasks) await store.create(t);
    const outcomes = await Promise.all(tasks.map((t, i) => batch.complete(t.id, { i }).outcome));
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(calls).toEqual([5]);
    const lone = record();
    await store.create(lone);
    expect((await batch.complete(lone.id, 'alone').outcome).ok).toBe(true);
    expect(calls).toEqual([5]); // a single completion goes out as the plain script
    for (const [i, t] of tasks.entries()) {
      expect(await store.get(t.id)).toMatchObject({ status: 'completed', result: { i } });
    }
    expect((await store.get(lone.id))?.result).toBe('alone');

    // `written` comes before the answer; a command sent after it on the same connection (as
    // BullMQ's move to completed is) runs after the completion in Redis.
    const next = Array.from({ length: 3 }, record);
    for (const t of next) await store.create(t);
    const pending = next.map((t) => batch.complete(t.id, 'ordered'));
    let answered = false;
    void Promise.all(pending.map((p) => p.outcome)).then(() => (answered = true));
    await Promise.all(pending.map((p) => p.written));
    expect(answered).toBe(false);
    const statuses = await Promise.all(
      next.map((t) => redis.hget(store.keys.task(t.id), 'status')),
    );
    expect(statuses).toEqual(['completed', 'completed', 'completed']);
  });
});

describe('CompletionBatch when the batched call fails', () => {
  it('queues the webhook of a task with a callback, and wakes whoever waits on it', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const hooked = record();
    hooked.callback = { url: 'https://example.test/hook' };
    const plain = record();
    await store.create(hooked);
    await store.create(plain);
    const listener = redis.duplicate();
    const heard: string[] = [];
    listener.on('message', (channel: string, seq: string) => heard.push(`${channel} ${seq}`));
    await listener.subscribe(store.keys.eventsChannel + hooked.id);
    try {
      await store.completeMany([
        { id: plain.id, result: 1 },
        { id: hooked.id, result: 2 },
      ]);
      const outbox = await redis.xrange(store.keys.outbox, '-', '+');
      expect(outbox.map(([, fields]) => fields)).toEqual([['task', hooked.id, 'event', '2']]);
      await expect.poll(() => heard).toEqual([`${store.keys.eventsChannel}${hooked.id} 2`]);
    } finally {
      listener.disconnect();
    }
  });

  it("writes the status and message of the lifecycle table's complete row", async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const task = record();
    await store.create(task);
    await store.completeMany([{ id: task.id, result: 1 }]);
    expect(await store.get(task.id)).toMatchObject({
      status: LIFECYCLE.complete.to,
      statusMessage: LIFECYCLE.complete.statusMessage,
      result: 1,
    });
  });

  it('sends each completion again on its own, so one bad task fails alone', async () => {
    const store = new TaskStore(redis, uniquePrefix(), 86_400_000);
    const batch = new CompletionBatch(store);
    const [a, b] = [record(), record()];
    await store.create(a);
    await store.create(b);
    const broken = randomUUID();
    await redis.set(store.keys.task(broken), 'not a hash', 'EX', 60); // WRONGTYPE for the script
    const settled = await Promise.allSettled(
      [a.id, broken, b.id].map((id) => batch.complete(id, 1).outcome),
    );
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await store.get(a.id))?.status).toBe('completed');
    expect((await store.get(b.id))?.status).toBe('completed');
  });
});
