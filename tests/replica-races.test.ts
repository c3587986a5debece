// Two API replicas racing on one task (issue 27, items 1, 3 and 5), made to happen in the losing
// order every time: one replica's Redis traffic goes through a relay (tests/helpers/relay.ts)
// that holds it at a chosen command while the other replica and the worker move on. Real APIs,
// a real SDK worker, one real Redis; nothing is made up, only delayed.
import { createHash } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { z } from 'zod';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createCatalog } from '@longrun/core';
import {
  createRedis,
  SCHEDULE_QUEUE_NAME,
  ScheduleStore,
  ScheduleTicker,
  shardOfTaskId,
  taskKeys,
  TaskStore,
  type TaskEngine,
} from '@longrun/engine/internal';
import { createWorker, defineJobType } from '@longrun/worker';
import { waitFor } from './helpers/http.js';
import { newRecord } from './helpers/records.js';
import { startRelay, type Relay } from './helpers/relay.js';
import {
  buildEngine,
  oneShard,
  startInProcessApi,
  uniquePrefix,
  workerRedis,
} from './helpers/service.js';

// One shard: both replicas must find an idempotency key on the same shard, and the relay sits in
// front of a single Redis (a cluster would redirect past it).
oneShard();

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await Promise.resolve()
      .then(cleanup)
      .catch(() => undefined);
  }
});

async function relay(): Promise<Relay> {
  const target = new URL(inject('redisUrl'));
  const started = await startRelay({
    host: target.hostname,
    port: Number(target.port || 6379),
  });
  cleanups.push(() => started.close());
  return started;
}

/** An engine (an API replica without HTTP) on `url`, its connections closed after the file. */
async function replica(
  url: string,
  prefix: string,
  redisTimeoutMs = 2000,
): Promise<{ engine: TaskEngine }> {
  const connection = createRedis(url, 'producer', { commandTimeoutMs: redisTimeoutMs });
  const subscriber = createRedis(url, 'subscriber');
  connection.on('error', () => undefined);
  subscriber.on('error', () => undefined);
  const { engine, types } = await buildEngine(connection, subscriber, { prefix, redisTimeoutMs });
  cleanups.push(async () => {
    await engine.close();
    await types.close();
    connection.disconnect();
    subscriber.disconnect();
  });
  return { engine };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('an answer raced by the next question (item 1)', () => {
  /** Asks two questions in turn, with different schemas, and completes with both answers. */
  const twoQuestions = defineJobType({
    name: 'two-questions',
    input: z.object({}),
    async handler(_input, ctx) {
      const first = await ctx.requestInput({
        message: 'q1',
        schema: z.object({ ok: z.boolean() }),
      });
      const second = await ctx.requestInput({
        message: 'q2',
        schema: z.object({ amount: z.number() }),
      });
      return { first, second };
    },
  });

  it('is refused (409) when the question changed after it was checked; the task still waits on the new one', async () => {
    const prefix = uniquePrefix();
    const register = createCatalog([twoQuestions]);
    const through = await relay();
    // Replica A talks to Redis directly, replica B through the relay.
    const a = await startInProcessApi({ prefix, register });
    cleanups.push(() => a.close());
    const b = await startInProcessApi({ prefix, register, redisUrl: through.url });
    cleanups.push(() => b.close());
    const worker = createWorker({
      ...workerRedis(),
      prefix,
      jobs: [twoQuestions],
      logger: pino({ level: 'silent' }),
      webhooks: false,
    });
    cleanups.push(() => worker.close());
    await worker.start();

    const submitted = await a.http('POST', '/v1/jobs', {
      body: { type: 'two-questions', input: {} },
    });
    expect(submitted.status, submitted.text).toBe(202);
    const id = submitted.body.taskId as string;
    const asking = (message: string) =>
      waitFor(
        async () => {
          const res = await a.http('GET', `/v1/jobs/${id}`);
          const request = res.body?.inputRequest as { message?: string } | undefined;
          return res.body?.status === 'input_required' && request?.message === message
            ? res
            : undefined;
        },
        { what: `${id} asking ${message}`, timeoutMs: 15_000 },
      );
    await asking('q1');

    // B checks its (late) answer against question 1, and its transition is held on the way.
    // (The transition names its lifecycle event, `answer`, as one argument of the script call.)
    through.hold({ match: '$6\r\nanswer\r\n', inclusive: true, replies: false });
    const late = b.http('POST', `/v1/jobs/${id}/input`, { body: { input: { ok: false } } });
    await waitFor(async () => (through.heldRequests > 0 ? true : undefined), {
      what: "B's answer held",
      timeoutMs: 10_000,
    });
    // Meanwhile A answers question 1, and the worker moves on to question 2.
    const first = await a.http('POST', `/v1/jobs/${id}/input`, { body: { input: { ok: true } } });
    expect(first.status, first.text).toBe(200);
    await asking('q2');
    through.release();

    const refused = await late;
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body.type).toBe('/problems/question-changed');
    expect(refused.body.taskStatus).toBe('input_required');
    const waiting = await asking('q2');
    expect(waiting.body.inputRequest.schema).toMatchObject({
      properties: { amount: { type: 'number' } },
    });

    // The task still takes an answer to the question it asks, through either replica.
    const second = await b.http('POST', `/v1/jobs/${id}/input`, {
      body: { input: { amount: 5 } },
    });
    expect(second.status, second.text).toBe(200);
    const done = await waitFor(
      async () => {
        const res = await a.http('GET', `/v1/jobs/${id}`);
        return res.body?.status === 'completed' ? res : undefined;
      },
      { what: `${id} completed`, timeoutMs: 15_000 },
    );
    expect(done.body.result).toEqual({ first: { ok: true }, second: { amount: 5 } });
  });
});

describe('a keyed submit whose create timed out (item 3)', () => {
  it('is not withdrawn once another request was handed its task', async () => {
    const prefix = uniquePrefix();
    const through = await relay();
    // Replica 1's create lands in Redis but its answer is held past the deadline; its withdraw
    // is held too, until replica 2 has replayed the key (well within the withdraw's own deadline).
    const first = await replica(through.url, prefix, 2500);
    const second = await replica(inject('redisUrl'), prefix);
    const body = { type: 'echo', input: { n: 1 } };
    const key = 'order-27';
    const idem = taskKeys(prefix).idempotency('alpha', sha256(key));
    through.hold({ match: idem, inclusive: false, replies: true });
    const timedOut = first.engine.submit('alpha', body, { idempotencyKey: key }).then(
      (outcome) => ({ outcome }),
      (error: unknown) => ({ error }),
    );
    await waitFor(async () => (through.heldRequests > 0 ? true : undefined), {
      what: "replica 1's withdraw held",
      timeoutMs: 10_000,
    });

    const replayed = await second.engine.submit('alpha', body, { idempotencyKey: key });
    expect(replayed.kind).toBe('replayed');
    const taskId = (replayed as { task: { taskId: string } }).task.taskId;
    through.release();
    const settled = await timedOut;

    // The replayed handle still names the task, and the key still leads to it: one task.
    expect((await second.engine.get('alpha', taskId)).kind).toBe('found');
    const retried = await second.engine.submit('alpha', body, { idempotencyKey: key });
    expect(retried).toMatchObject({ kind: 'replayed', task: { taskId } });
    const listed = await second.engine.list('alpha', {});
    expect(listed).toMatchObject({ kind: 'page', tasks: [{ taskId }] });
    // Replica 1 answers as if it had created it (it had): the same task.
    expect(settled).toMatchObject({ outcome: { kind: 'created', task: { taskId } } });
  });

  it('is still withdrawn when nobody was handed its task', async () => {
    const prefix = uniquePrefix();
    const through = await relay();
    const first = await replica(through.url, prefix, 1000);
    const second = await replica(inject('redisUrl'), prefix);
    const body = { type: 'echo', input: { n: 2 } };
    const key = 'order-28';
    through.hold({
      match: taskKeys(prefix).idempotency('alpha', sha256(key)),
      inclusive: false,
      replies: true,
    });
    const timedOut = first.engine.submit('alpha', body, { idempotencyKey: key }).then(
      (outcome) => ({ outcome }),
      (error: unknown) => ({ error }),
    );
    await waitFor(async () => (through.heldRequests > 0 ? true : undefined), {
      what: "replica 1's withdraw held",
      timeoutMs: 10_000,
    });
    through.release();
    const settled = await timedOut;
    expect(settled).toHaveProperty('error');
    // Nothing of it is left: a retry with the key makes the task afresh.
    expect(await second.engine.list('alpha', {})).toMatchObject({ kind: 'page', tasks: [] });
    const retried = await second.engine.submit('alpha', body, { idempotencyKey: key });
    expect(retried.kind).toBe('created');
  });
});

describe('a schedule deleted while its tick is in flight (item 5)', () => {
  it('makes no task after DELETE answered', async () => {
    const prefix = uniquePrefix();
    const { engine } = await replica(inject('redisUrl'), prefix);
    const created = await engine.createSchedule('alpha', {
      type: 'echo',
      input: { n: 3 },
      cron: '0 0 1 1 *',
    });
    expect(created.kind).toBe('created');
    const scheduleId = (created as { schedule: { scheduleId: string } }).schedule.scheduleId;

    const connection = createRedis(inject('redisUrl'), 'producer');
    const queue = new Queue(SCHEDULE_QUEUE_NAME, { connection, prefix });
    cleanups.push(async () => {
      await queue.close();
      connection.disconnect();
    });
    const store = new ScheduleStore(connection, taskKeys(prefix));
    let deleted = false;
    // A tick that has read its schedule when the delete runs (and answers), then submits.
    const ticker = new ScheduleTicker({
      connection,
      prefix,
      read: async (id) => {
        const schedule = await store.get(id);
        expect(await engine.deleteSchedule('alpha', id)).toEqual({ kind: 'deleted' });
        deleted = true;
        return schedule;
      },
      submit: (tenant, body, opts) => engine.submitTick(tenant, body, opts),
      noteRun: (id, at, taskId) => store.noteRun(id, at, taskId),
      noteError: (id, at, message) => store.noteError(id, at, message),
      removeScheduler: (id) => queue.removeJobScheduler(id),
    });
    const tick = await queue.add('tick', { scheduleId });
    const outcome = await ticker.tick(tick);
    expect(deleted).toBe(true);
    expect(outcome).toBe('gone');
    expect(await engine.list('alpha', {})).toMatchObject({ kind: 'page', tasks: [] });
  });
});

describe('TaskStore.discard (item 3)', () => {
  it('takes back an untouched task, and keeps one that was replayed or changed', async () => {
    const prefix = uniquePrefix();
    const connection = new Redis(inject('redisUrl'));
    cleanups.push(() => connection.quit());
    const store = new TaskStore(connection, prefix, 86_400_000);
    const claim = (id: string, key: string) => ({
      key: store.keys.idempotency('t', key),
      value: `${id} body-hash`,
    });
    const [untouched, replayed, ran] = [newRecord(), newRecord(), newRecord()];
    for (const [record, key] of [
      [untouched, 'k1'],
      [replayed, 'k2'],
      [ran, 'k3'],
    ] as const) {
      expect(await store.create(record, claim(record.id, key))).toEqual({ created: true });
    }
    // Another request with k2 and the same body is handed the task; another body is not.
    const again = newRecord();
    expect(await store.create(again, claim(again.id, 'k2'))).toEqual({
      created: false,
      idempotencyValue: `${replayed.id} body-hash`,
    });
    await store.transition(ran.id, 'start');

    expect(await store.discard(untouched, claim(untouched.id, 'k1'))).toBe('discarded');
    expect(await store.get(untouched.id)).toBeNull();
    expect(await connection.exists(store.keys.idempotency('t', 'k1'))).toBe(0);
    for (const [record, key] of [
      [replayed, 'k2'],
      [ran, 'k3'],
    ] as const) {
      expect(await store.discard(record, claim(record.id, key))).toBe('kept');
      expect(await store.get(record.id)).not.toBeNull();
      expect(await connection.get(store.keys.idempotency('t', key))).toBe(`${record.id} body-hash`);
    }
    expect(await store.discard(newRecord())).toBe('absent');
  });

  it('is not told of a key reused with another body (that request is refused, not handed the task)', async () => {
    const prefix = uniquePrefix();
    const connection = new Redis(inject('redisUrl'));
    cleanups.push(() => connection.quit());
    const store = new TaskStore(connection, prefix, 86_400_000);
    const first = newRecord();
    const key = store.keys.idempotency('t', 'k');
    await store.create(first, { key, value: `${first.id} one` });
    const other = newRecord();
    await store.create(other, { key, value: `${other.id} two` });
    expect(await store.discard(first, { key, value: `${first.id} one` })).toBe('discarded');
  });
});

describe('ticks on several shards (item 5)', () => {
  it('go to shard 0, beside their schedule, and still make their task while it exists', async () => {
    const prefix = uniquePrefix();
    const connection = createRedis(inject('redisUrl'), 'producer');
    const subscriber = createRedis(inject('redisUrl'), 'subscriber');
    const { engine, types } = await buildEngine(connection, subscriber, { prefix, shards: 3 });
    cleanups.push(async () => {
      await engine.close();
      await types.close();
      connection.disconnect();
      subscriber.disconnect();
    });
    const created = await engine.createSchedule('alpha', {
      type: 'echo',
      input: { n: 4 },
      cron: '0 0 1 1 *',
    });
    const scheduleId = (created as { schedule: { scheduleId: string } }).schedule.scheduleId;
    for (const tick of ['1', '2', '3', '4']) {
      const outcome = await engine.submitTick(
        'alpha',
        { type: 'echo', input: { n: 4 } },
        {
          scheduleId,
          idempotencyKey: `schedule:${scheduleId}:${tick}`,
        },
      );
      expect(outcome.kind).toBe('created');
      expect(shardOfTaskId((outcome as { task: { taskId: string } }).task.taskId)).toBe(0);
    }
  });
});
