import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  createClient,
  LongrunError,
  LongrunNetworkError,
  verifyWebhook,
  WebhookVerificationError,
  type FetchLike,
  type JobInput,
  type LongrunClient,
  type TaskHandle,
  type TaskUpdate,
} from '@longrun/client';
import type { jobTypes } from '@longrun/worker-app';
import { waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { KEY_A, startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';
// @ts-expect-error plain ESM helper shared with `npm start`
import { findRedisServer, freePort, startRedis } from '../scripts/redis.mjs';
import { CLOSED_URL } from './helpers/closed-port.js';

const POLL_MS = 1000;
let api: InProcessApi;
let worker: Proc;
let lr: LongrunClient<typeof jobTypes>;

// Everything the tests start, stopped in reverse order at the end whatever happened.
const cleanups: (() => Promise<unknown> | unknown)[] = [];
beforeAll(async () => {
  api = await startInProcessApi({ pollIntervalMs: POLL_MS, webhookAllow: ['127.0.0.1'] });
  cleanups.push(() => api.close());
  worker = await startWorker(api.prefix, {
    LONGRUN_WORKER_CONCURRENCY: '8',
    LONGRUN_WEBHOOK_ALLOW: '127.0.0.1',
  });
  cleanups.push(() => worker.stop());
  lr = createClient<typeof jobTypes>({ baseUrl: api.url, apiKey: KEY_A });
});
afterAll(async () => {
  // Work a failed test left running would hold up the worker's graceful stop.
  // Bounded too: a client retrying a refused request must not keep the processes below running.
  const signal = AbortSignal.timeout(8000);
  const working = await lr?.list({ status: 'working', limit: 100, signal }).catch(() => undefined);
  for (const task of working?.tasks ?? []) {
    await lr.cancel(task.taskId, { signal }).catch(() => undefined);
  }
  // Each step is bounded, and one that hangs is named (the hook's own timeout would not say which).
  const slow: string[] = [];
  for (const cleanup of cleanups.splice(0).reverse()) {
    const done = Promise.resolve()
      .then(cleanup)
      .then(
        () => true,
        () => true,
      );
    const late = new Promise<false>((r) => setTimeout(() => r(false), 8000).unref());
    if (!(await Promise.race([done, late]))) slow.push(String(cleanup).slice(0, 60));
  }
  expect(
    slow,
    `cleanups still running after 8 s; worker: ${worker?.lines.slice(-5).join('\n')}`,
  ).toEqual([]);
}, 60_000);

interface Sent {
  method: string;
  url: URL;
  headers: Headers;
  at: number;
  status?: number;
}

/** A fetch that records every real request it sends (it is the real fetch, counted). */
function countingFetch(): { fetch: FetchLike; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (input, init) => {
    const entry: Sent = {
      method: init?.method ?? 'GET',
      url: new URL(String(input)),
      headers: new Headers(init?.headers),
      at: Date.now(),
    };
    sent.push(entry);
    const res = await globalThis.fetch(input, init);
    entry.status = res.status;
    return res;
  };
  return { fetch, sent };
}

/** Cancels a task the test left running (ignoring a task that already finished). */
async function cancelQuietly(id: string) {
  await lr.cancel(id).catch(() => undefined);
}

describe('submit → wait → result', () => {
  it('takes three lines for echo', async () => {
    const { taskId } = await lr.submit('echo', { x: 1 });
    const out = await lr.wait(taskId);
    expect(out.status).toBe('completed');
    expect(out.result).toEqual({ x: 1 });
    expect(out.taskId).toBe(taskId);
    expect(await lr.result(taskId)).toEqual({ taskId, status: 'completed', result: { x: 1 } });
  });

  it('reports a failed task as a result, not as an error', async () => {
    const { taskId } = await lr.submit('fail', { message: 'disk on fire' });
    const out = await lr.wait(taskId);
    expect(out.status).toBe('failed');
    expect(out.error?.message).toBe('disk on fire');
    expect(await lr.result(taskId)).toMatchObject({
      taskId,
      status: 'failed',
      error: { message: 'disk on fire' },
    });
  });

  it('reports progress through onUpdate, each change once', async () => {
    const { taskId } = await lr.submit('sleep', { ms: 2500 });
    const seen: TaskHandle[] = [];
    const out = await lr.wait(taskId, { onUpdate: (task) => seen.push(task) });
    expect(out.status).toBe('completed');
    expect(out.result).toEqual({ sleptMs: 2500 });
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.at(-1)?.status).toBe('completed');
    const keys = seen.map((t) => JSON.stringify([t.status, t.statusMessage, t.progress]));
    for (let i = 1; i < keys.length; i++) {
      expect(keys[i], 'the same state was reported twice in a row').not.toBe(keys[i - 1]);
    }
  });

  it('answers 409 with the task status from result() while the task works', async () => {
    const { taskId } = await lr.submit('sleep', { ms: 60_000 });
    try {
      const error = await lr.result(taskId).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LongrunError);
      expect(error).toMatchObject({ status: 409, code: 'not-terminal' });
      expect((error as LongrunError).problem.taskStatus).toBe('working');
      expect((error as LongrunError).retryAfter).toBe(POLL_MS / 1000);
    } finally {
      await cancelQuietly(taskId);
    }
  });
});

describe('submit options', () => {
  it('sends ttlMs and priority through to the task and its job', async () => {
    const handle = await lr.submit('sleep', { ms: 30_000 }, { ttlMs: 60_000, priority: 3 });
    expect(handle.ttlMs).toBe(60_000);
    // The record keeps the task's own priority; under fair share (decision 33) the job's BullMQ
    // priority is the tenant's turn plus that priority less one.
    const shard = api.parts.shardOf(handle.taskId);
    expect(await shard.store.priority(handle.taskId)).toBe(3);
    const job = await shard.jobs.queueFor('sleep').getJob(handle.taskId);
    expect(job?.opts.priority).toBeGreaterThanOrEqual(3);
    expect((await lr.cancel(handle.taskId)).status).toBe('cancelled');
  });
});

describe('wait stops when told to', () => {
  it('rejects with the abort reason when its signal aborts (the task goes on)', async () => {
    const { taskId } = await lr.submit('sleep', { ms: 60_000 });
    try {
      const controller = new AbortController();
      const reason = new Error('enough');
      const waiting = lr.wait(taskId, {
        signal: controller.signal,
        onUpdate: () => controller.abort(reason),
      });
      await expect(waiting).rejects.toBe(reason);
      expect((await lr.get(taskId)).status).toBe('working');
    } finally {
      await cancelQuietly(taskId);
    }
  });

  it('rejects with a TimeoutError after timeoutMs', async () => {
    const { taskId } = await lr.submit('sleep', { ms: 60_000 });
    try {
      const error = await lr.wait(taskId, { timeoutMs: 300 }).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'TimeoutError' });
      expect((await lr.get(taskId)).status).toBe('working');
    } finally {
      await cancelQuietly(taskId);
    }
  });

  it('rejects at once when the signal is already aborted', async () => {
    const { taskId } = await lr.submit('echo', {});
    const reason = new Error('before');
    await expect(lr.wait(taskId, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });
});

describe('cancel, input, list, forget', () => {
  it('cancels a running task; wait and result then say cancelled; a second cancel is 409', async () => {
    const { taskId } = await lr.submit('sleep', { ms: 60_000 });
    await waitFor(async () => (await lr.get(taskId)).progress !== undefined, {
      what: 'the sleep to report progress',
    });
    const cancelled = await lr.cancel(taskId);
    expect(cancelled.status).toBe('cancelled');
    expect((await lr.wait(taskId)).status).toBe('cancelled');
    expect(await lr.result(taskId)).toMatchObject({ taskId, status: 'cancelled' });
    await expect(lr.cancel(taskId)).rejects.toMatchObject({ status: 409 });
  });

  it('round-trips input with approval: wait returns input_required, input answers it', async () => {
    const { taskId } = await lr.submit('approval', { question: 'Ship release 42?' });
    const asked = await lr.wait(taskId);
    expect(asked.status).toBe('input_required');
    expect(asked.inputRequest?.message).toBe('Ship release 42?');
    expect(asked.inputRequest?.schema).toMatchObject({ type: 'object' });

    const wrong = await lr.input(taskId, { approved: 'yes' }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(LongrunError);
    expect(wrong).toMatchObject({ status: 422 });
    // The field list is kept on the error and said in its message (issue 27).
    expect((wrong as LongrunError).errors).toContainEqual({
      path: 'input.approved',
      message: expect.stringMatching(/boolean/),
    });
    expect((wrong as LongrunError).message).toMatch(/input\.approved: must be boolean/);
    expect((await lr.get(taskId)).status).toBe('input_required');

    const answered = await lr.input(taskId, { approved: true, comment: 'go' });
    expect(answered.status).toBe('working');
    const done = await lr.wait(taskId);
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({ approved: true, comment: 'go' });
  });

  it('waits through input_required when asked to', async () => {
    const { taskId } = await lr.submit('approval', { question: 'Wait through?' });
    const waiting = lr.wait(taskId, { returnOnInputRequired: false, longPoll: false });
    await waitFor(async () => (await lr.get(taskId)).status === 'input_required', {
      what: 'input_required',
    });
    await lr.input(taskId, { approved: false });
    const done = await waiting;
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({ approved: false });
  });

  it('lists tasks newest first, filters by status and pages with the cursor', async () => {
    const first = await lr.submit('echo', { n: 1 });
    const second = await lr.submit('echo', { n: 2 });
    await lr.wait(first.taskId);
    await lr.wait(second.taskId);
    const page = await lr.list({ limit: 1 });
    expect(page.tasks).toHaveLength(1);
    expect(page.tasks[0]?.taskId).toBe(second.taskId);
    expect(page.nextCursor).toEqual(expect.any(String));
    const next = await lr.list({ limit: 1, cursor: page.nextCursor! });
    expect(next.tasks[0]?.taskId).toBe(first.taskId);
    const completed = await lr.list({ status: 'completed', limit: 100 });
    expect(completed.tasks.every((t) => t.status === 'completed')).toBe(true);
    expect(completed.tasks.map((t) => t.taskId)).toEqual(
      expect.arrayContaining([first.taskId, second.taskId]),
    );
  });

  it('forgets a finished task', async () => {
    const { taskId } = await lr.submit('echo', {});
    await lr.wait(taskId);
    await lr.forget(taskId);
    await expect(lr.get(taskId)).rejects.toMatchObject({ status: 404, code: 'not-found' });
  });
});

describe('idempotency', () => {
  it('returns the same task for the same key', async () => {
    const key = `client-test-${randomUUID()}`;
    const a = await lr.submit('echo', { k: 1 }, { idempotencyKey: key });
    const b = await lr.submit('echo', { k: 1 }, { idempotencyKey: key });
    expect(b.taskId).toBe(a.taskId);
    const other = await lr.submit('echo', { k: 1 });
    expect(other.taskId).not.toBe(a.taskId);
  });

  it('retries a submit whose answer was lost with the same key: one task, not two', async () => {
    const lost = losingFirstAnswer((body) => (body as TaskHandle).taskId);
    const task = await lost.client.submit('echo', { once: true });
    expect(lost.dropped).toEqual(expect.any(String));
    expect(task.taskId).toBe(lost.dropped);
    expect(lost.sentKeys).toHaveLength(2);
    expect(lost.sentKeys[1]).toBe(lost.sentKeys[0]);
    expect(lost.sentKeys[0]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

/**
 * A client whose first POST is answered, its answer read (`idOf` takes the id from it) and then
 * thrown away, as if the connection died on its way back; every POST's Idempotency-Key is kept.
 */
function losingFirstAnswer(idOf: (body: unknown) => string) {
  const lost: { sentKeys: string[]; dropped: string | undefined } = {
    sentKeys: [],
    dropped: undefined,
  };
  const fetch: FetchLike = async (input, init) => {
    const res = await globalThis.fetch(input, init);
    if (init?.method === 'POST') {
      lost.sentKeys.push(new Headers(init.headers).get('idempotency-key')!);
      if (lost.dropped === undefined) {
        lost.dropped = idOf(await res.json());
        throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
      }
    }
    return res;
  };
  const client = createClient<typeof jobTypes>({
    baseUrl: api.url,
    apiKey: KEY_A,
    fetch,
    retry: { minDelayMs: 10 },
  });
  return Object.assign(lost, { client });
}

describe('idempotency of a schedule create', () => {
  it('retries a create whose answer was lost with the same key: one schedule, not two', async () => {
    const lost = losingFirstAnswer((body) => (body as { scheduleId: string }).scheduleId);
    const marker = randomUUID();
    const schedule = await lost.client.createSchedule('echo', { marker }, { everyMs: 3_600_000 });
    expect(schedule.scheduleId).toBe(lost.dropped);
    expect(lost.sentKeys).toHaveLength(2);
    expect(lost.sentKeys[1]).toBe(lost.sentKeys[0]);
    const mine = (await lr.listSchedules()).filter((s) => s.input.marker === marker);
    expect(mine.map((s) => s.scheduleId)).toEqual([lost.dropped]);
    await lr.deleteSchedule(schedule.scheduleId);
  });
});

describe('errors', () => {
  it('rejects a wrong key with a LongrunError 401 carrying the problem', async () => {
    const client = createClient({ baseUrl: api.url, apiKey: 'not-a-key-at-all-0000' });
    const error = await client.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LongrunError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: 'LongrunError',
      status: 401,
      title: 'Unauthorized',
      type: '/problems/unauthorized',
      code: 'unauthorized',
    });
  });

  it('names the bad field of a 422 (untyped client)', async () => {
    const client = createClient({ baseUrl: api.url, apiKey: KEY_A });
    const error = await client.submit('sleep', { ms: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LongrunError);
    expect((error as LongrunError).status).toBe(422);
    expect((error as LongrunError).errors?.map((e) => e.path)).toContain('input.ms');
    expect((error as LongrunError).message).toMatch(/input\.ms/);
  });

  it('is a LongrunNetworkError (status 0) when nothing answers', async () => {
    const client = createClient({
      baseUrl: CLOSED_URL,
      apiKey: KEY_A,
      retry: { retries: 1, minDelayMs: 10 },
    });
    const error = await client.get(randomUUID()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LongrunNetworkError);
    expect(error).toBeInstanceOf(LongrunError);
    expect((error as LongrunError).status).toBe(0);
    expect((error as LongrunError).detail).toMatch(/ECONNREFUSED/);
  });
});

describe('wait is polite', () => {
  /** Gaps between the starts of consecutive requests. */
  const gaps = (sent: Sent[]) => sent.slice(1).map((s, i) => s.at - sent[i]!.at);

  it('never polls the handle faster than pollIntervalMs', async () => {
    const { fetch, sent } = countingFetch();
    const client = createClient<typeof jobTypes>({ baseUrl: api.url, apiKey: KEY_A, fetch });
    const { taskId } = await lr.submit('sleep', { ms: 3500 });
    const out = await client.wait(taskId, { longPoll: false });
    expect(out.status).toBe('completed');
    expect(sent.every((s) => s.method === 'GET' && s.url.pathname === `/v1/jobs/${taskId}`)).toBe(
      true,
    );
    expect(sent.length).toBeGreaterThanOrEqual(2);
    // Timers may fire a millisecond early; the interval is 1000 ms.
    for (const gap of gaps(sent)) expect(gap).toBeGreaterThanOrEqual(POLL_MS - 5);
  });

  it('long-polls /result?wait= by default, never sooner than the interval', async () => {
    const { fetch, sent } = countingFetch();
    const client = createClient<typeof jobTypes>({ baseUrl: api.url, apiKey: KEY_A, fetch });
    const { taskId } = await lr.submit('sleep', { ms: 3500 });
    const out = await client.wait(taskId);
    expect(out.status).toBe('completed');
    const held = sent.filter((s) => s.url.pathname.endsWith('/result'));
    expect(held.length).toBeGreaterThanOrEqual(1);
    for (const s of held) expect(Number(s.url.searchParams.get('wait'))).toBeGreaterThanOrEqual(1);
    // The handle is read first and last (for the full picture); in between, held requests
    // start no more often than once per interval.
    expect(sent.filter((s) => !s.url.pathname.endsWith('/result'))).toHaveLength(2);
    expect(sent.at(-1)?.url.pathname).toBe(`/v1/jobs/${taskId}`);
    for (const gap of gaps(held)) expect(gap).toBeGreaterThanOrEqual(POLL_MS - 5);
  });
});

describe('when Redis is away (503 + Retry-After)', () => {
  let redisUrl: string;
  let stopRedis: () => Promise<void>;
  let restartRedis: () => Promise<void>;
  let faulty: InProcessApi;

  beforeAll(async () => {
    const bin = findRedisServer();
    expect(bin, 'redis-server binary').toBeTruthy();
    const dir = mkdtempSync(join(tmpdir(), 'longrun-client-redis-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const start = async () => {
      const redis = await startRedis({ bin, port, dir, appendonly: true });
      cleanups.push(() => redis.stop());
      stopRedis = () => redis.stop();
      redisUrl = redis.url;
    };
    await start();
    restartRedis = start;
    faulty = await startInProcessApi({ redisUrl, redisTimeoutMs: 500, pollIntervalMs: POLL_MS });
    cleanups.push(() => faulty.close());
  });

  it('retries with backoff no sooner than Retry-After, then throws the 503', async () => {
    const { fetch, sent } = countingFetch();
    const client = createClient({
      baseUrl: faulty.url,
      apiKey: KEY_A,
      fetch,
      retry: { retries: 1, minDelayMs: 10 },
    });
    await client.list(); // Redis is up
    await stopRedis();
    sent.length = 0;
    const error = await client.list().catch((e: unknown) => e);
    await restartRedis();
    expect(error).toBeInstanceOf(LongrunError);
    expect(error).toMatchObject({ status: 503 });
    const retryAfter = (error as LongrunError).retryAfter!;
    expect(retryAfter).toBeGreaterThan(0);
    expect(sent.map((s) => s.status)).toEqual([503, 503]);
    expect(sent[1]!.at - sent[0]!.at).toBeGreaterThanOrEqual(retryAfter * 1000 - 5);
  });

  it('submit retries a 503 with the same key; wait rides out the outage', async () => {
    const { fetch, sent } = countingFetch();
    const client = createClient({
      baseUrl: faulty.url,
      apiKey: KEY_A,
      fetch,
      retry: { retries: 5, minDelayMs: 10 },
    });
    // The previous test restarted Redis: let the API reconnect first, so every 503 below is ours.
    await waitFor(async () => (await fetch(`${faulty.url}/readyz`)).status === 200, {
      what: 'the API to be ready again',
    });
    const parked = await client.submit('approval', { question: 'still there?' });
    const waiting = client.wait(parked.taskId, { longPoll: false, returnOnInputRequired: false });

    await stopRedis();
    const mark = sent.length;
    const during = () => sent.slice(mark);
    const submitting = client.submit('echo', { during: 'outage' });
    await waitFor(async () => during().some((s) => s.method === 'POST' && s.status === 503), {
      what: 'a submit answered 503',
    });
    await waitFor(
      async () => during().some((s) => s.url.pathname.endsWith(parked.taskId) && s.status === 503),
      { what: 'a wait poll answered 503' },
    );
    await restartRedis();
    const submitted = await submitting;
    const posts = during().filter((s) => s.method === 'POST' && s.url.pathname === '/v1/jobs');
    expect(posts.length).toBeGreaterThanOrEqual(2);
    const keys = new Set(posts.map((s) => s.headers.get('idempotency-key')));
    expect(keys.size).toBe(1); // every retry of the outage submit carried one key
    const listed = await client.list({ limit: 100 });
    expect(listed.tasks.filter((t) => t.taskId === submitted.taskId)).toHaveLength(1);
    expect(listed.tasks).toHaveLength(2);

    // The API answers again; wait is still waiting (no worker here), and stops when told.
    await waitFor(
      async () =>
        sent.some(
          (s) =>
            s.url.pathname.endsWith(parked.taskId) && s.status === 200 && s.at > posts.at(-1)!.at,
        ),
      { what: 'wait to poll successfully after the outage' },
    );
    await client.cancel(parked.taskId);
    expect((await waiting).status).toBe('cancelled');
  });
});

describe('events()', () => {
  it('streams every change of a task in another process until the terminal one', async () => {
    const { taskId } = await lr.submit('sleep', { ms: 2500 });
    const updates: TaskUpdate[] = [];
    for await (const update of lr.events(taskId)) updates.push(update);
    expect(updates.length).toBeGreaterThanOrEqual(3);
    expect(updates[0]?.task.taskId).toBe(taskId);
    expect(updates.at(-1)?.task.status).toBe('completed');
    expect(updates.at(-1)?.task.result).toEqual({ sleptMs: 2500 });
    expect(updates.some((u) => typeof u.task.progress === 'number')).toBe(true);
    const ids = updates.map((u) => u.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('resumes after lastEventId without repeating it', async () => {
    const { taskId } = await lr.submit('sleep', { ms: 2000 });
    const all: TaskUpdate[] = [];
    for await (const update of lr.events(taskId)) all.push(update);
    expect(all.length).toBeGreaterThanOrEqual(3);
    const resumed: TaskUpdate[] = [];
    for await (const update of lr.events(taskId, { lastEventId: all[1]!.id })) resumed.push(update);
    expect(resumed.map((u) => u.id)).toEqual(all.slice(2).map((u) => u.id));
  });

  it('reconnects with Last-Event-ID when the connection drops, missing nothing', async () => {
    const streams: Headers[] = [];
    const updates: TaskUpdate[] = [];
    let receivedBeforeReconnect = 0;
    // The first stream is cut right after its first event, as a flaky network would.
    const fetch: FetchLike = async (input, init) => {
      const res = await globalThis.fetch(input, init);
      if (!String(input).endsWith('/events')) return res;
      streams.push(new Headers(init?.headers));
      if (streams.length === 2) receivedBeforeReconnect = updates.length;
      if (streams.length > 1 || !res.body) return res;
      const reader = res.body.getReader();
      let text = '';
      const cut = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (/event: task\n[^\n]*\n\n/.test(text)) {
            // Everything read so far was handed over; now the connection "dies".
            await reader.cancel();
            controller.error(new TypeError('terminated'));
            return;
          }
          const { value, done } = await reader.read();
          if (done) return controller.close();
          text += new TextDecoder().decode(value);
          controller.enqueue(value);
        },
      });
      return new Response(cut, { status: res.status, headers: res.headers });
    };
    const client = createClient<typeof jobTypes>({ baseUrl: api.url, apiKey: KEY_A, fetch });
    const { taskId } = await lr.submit('sleep', { ms: 2500 });
    for await (const update of client.events(taskId)) updates.push(update);
    expect(streams.length).toBeGreaterThanOrEqual(2);
    expect(receivedBeforeReconnect).toBeGreaterThanOrEqual(1);
    expect(streams[0]!.get('last-event-id')).toBeNull();
    expect(streams[1]!.get('last-event-id')).toBe(updates[receivedBeforeReconnect - 1]!.id);
    expect(updates.at(-1)?.task.status).toBe('completed');
    const ids = updates.map((u) => u.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Nothing missed: the same updates as a fresh, uninterrupted read of the stream.
    const again: TaskUpdate[] = [];
    for await (const update of lr.events(taskId, { lastEventId: updates[0]!.id }))
      again.push(update);
    expect(ids.slice(1)).toEqual(again.map((u) => u.id));
  });

  it('stops with the abort reason; a 404 task is a LongrunError', async () => {
    const { taskId } = await lr.submit('sleep', { ms: 60_000 });
    try {
      const controller = new AbortController();
      const reason = new Error('stop streaming');
      const reading = (async () => {
        for await (const _update of lr.events(taskId, { signal: controller.signal })) {
          controller.abort(reason);
        }
      })();
      await expect(reading).rejects.toBe(reason);
    } finally {
      await cancelQuietly(taskId);
    }
    const missing = lr.events(randomUUID());
    await expect(missing.next()).rejects.toMatchObject({ status: 404 });
  });
});

describe('verifyWebhook', () => {
  const secret = 'whsec-0123456789abcdef';
  const now = 1_764_500_000_000;
  const timestamp = String(now / 1000);
  const task = {
    resultType: 'task',
    taskId: randomUUID(),
    type: 'echo',
    status: 'completed',
    statusMessage: 'done',
    createdAt: new Date(now).toISOString(),
    lastUpdatedAt: new Date(now).toISOString(),
    ttlMs: 86_400_000,
    pollIntervalMs: 5000,
    result: { x: 1 },
  };
  const body = JSON.stringify({
    id: randomUUID(),
    type: 'task.updated',
    createdAt: new Date(now).toISOString(),
    task,
  });
  const sign = (s: string, t: string, b: string) =>
    `v1=${createHmac('sha256', s).update(`${t}.${b}`).digest('hex')}`;
  const headers = (signature = sign(secret, timestamp, body), ts = timestamp) => ({
    'content-type': 'application/json',
    'longrun-timestamp': ts,
    'longrun-signature': signature,
  });

  it('accepts a correct signature and returns the payload', () => {
    const payload = verifyWebhook({ secret, body, headers: headers(), now });
    expect(payload.task.taskId).toBe(task.taskId);
    expect(payload.type).toBe('task.updated');
    // Raw bytes, a Headers object and any header case work too.
    const fetchHeaders = new Headers({
      'Longrun-Timestamp': timestamp,
      'Longrun-Signature': sign(secret, timestamp, body),
    });
    expect(verifyWebhook({ secret, body: Buffer.from(body), headers: fetchHeaders, now }).id).toBe(
      payload.id,
    );
    // One of several signatures (a secret being rotated) is enough.
    const rotated = `${sign('old-secret-0123456789', timestamp, body)}, ${sign(secret, timestamp, body)}`;
    expect(verifyWebhook({ secret, body, headers: headers(rotated), now }).id).toBe(payload.id);
  });

  it('rejects a wrong secret, a changed body, a missing header and a stale timestamp', () => {
    const reason = (f: () => unknown) => {
      try {
        f();
      } catch (error) {
        expect(error).toBeInstanceOf(WebhookVerificationError);
        return (error as WebhookVerificationError).reason;
      }
      return 'accepted';
    };
    const wrong = headers(sign('another-secret-0123456', timestamp, body));
    expect(reason(() => verifyWebhook({ secret, body, headers: wrong, now }))).toBe(
      'bad-signature',
    );
    expect(
      reason(() =>
        verifyWebhook({ secret, body: body.replace('"x":1', '"x":2'), headers: headers(), now }),
      ),
    ).toBe('bad-signature');
    expect(
      reason(() =>
        verifyWebhook({ secret, body, headers: { 'longrun-timestamp': timestamp }, now }),
      ),
    ).toBe('missing-header');
    expect(
      reason(() => verifyWebhook({ secret, body, headers: headers(), now: now + 301_000 })),
    ).toBe('stale-timestamp');
    expect(
      reason(() => verifyWebhook({ secret, body, headers: headers(), now: now - 301_000 })),
    ).toBe('stale-timestamp');
    expect(
      reason(() =>
        verifyWebhook({ secret, body, headers: headers(), now: now + 60_000, toleranceSec: 30 }),
      ),
    ).toBe('stale-timestamp');
    expect(() =>
      verifyWebhook({ secret, body: JSON.parse(body) as string, headers: headers(), now }),
    ).toThrow(TypeError);
  });
});

describe('verifyWebhook on real deliveries', () => {
  it('accepts what the service signs, for every status change, and only with the secret', async () => {
    const received: { body: string; headers: IncomingHttpHeaders }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ body, headers: req.headers });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => receiver.close(r)));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const secret = `hook-secret-${randomUUID()}`;

    const { taskId } = await lr.submit(
      'approval',
      { question: 'Deliver?' },
      { callback: { url, secret } },
    );
    expect((await lr.wait(taskId)).status).toBe('input_required');
    await lr.input(taskId, { approved: true });
    expect((await lr.wait(taskId)).status).toBe('completed');

    const events = await waitFor(
      async () => {
        const verified = received.map((r) => verifyWebhook({ secret, ...r }));
        return verified.some((e) => e.task.status === 'completed') ? verified : undefined;
      },
      { what: 'the completed delivery' },
    );
    expect(events.every((e) => e.task.taskId === taskId)).toBe(true);
    expect(events.map((e) => e.task.status)).toContain('input_required');
    const wrong = () => verifyWebhook({ secret: `${secret}-not`, ...received[0]! });
    expect(wrong).toThrow(WebhookVerificationError);
  });
});

describe('types', () => {
  it('checks submit inputs against the catalog at compile time', () => {
    const typed = createClient<typeof jobTypes>({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' });
    expectTypeOf<JobInput<typeof jobTypes, 'sleep'>>().toEqualTypeOf<{ ms: number }>();
    expectTypeOf<JobInput<typeof jobTypes, 'approval'>>().toEqualTypeOf<{ question: string }>();
    expectTypeOf(typed.submit)
      .parameter(0)
      .toEqualTypeOf<'sleep' | 'echo' | 'fail' | 'flaky' | 'approval' | 'durable'>();
    // Never called: tsc checks these lines, vitest only needs them to exist.
    const compileOnly = () => {
      void typed.submit('sleep', { ms: 5 });
      void typed.submit('echo', { anything: [1, 2] });
      // @ts-expect-error ms must be a number
      void typed.submit('sleep', { ms: 'x' });
      // @ts-expect-error sleep takes no other field
      void typed.submit('sleep', { ms: 5, extra: true });
      // @ts-expect-error no such job type
      void typed.submit('nope', {});
      const untyped = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' });
      void untyped.submit('anything', { ms: 'x' });
    };
    expect(typeof compileOnly).toBe('function');
  });
});
