// Delayed starts (delayMs / runAt) and run timeouts (timeoutMs per task, bounded by the job
// type's), through the HTTP API and a real SDK worker (issue 16).
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorker, defineJobType, type LongrunWorker } from '@longrun/worker';
import { waitFor } from './helpers/http.js';
import { startInProcessApi, type InProcessApi, workerRedis } from './helpers/service.js';

let api: InProcessApi;
let worker: LongrunWorker;
const redis = new Redis(inject('redisUrl'));
const runs = (id: string) => `${api.prefix}:test:runs:${id}`;
const aborted = (id: string) => `${api.prefix}:test:aborted:${id}`;

/** Counts its runs. */
const tickJob = defineJobType({
  name: 'tick',
  input: z.object({}),
  handler: async (_input, ctx) => {
    await redis.incr(runs(ctx.taskId));
    return { ran: true };
  },
});

/** Ignores its signal for `ms`, noting when the signal aborted; a type-level timeout of 2 s. */
const hangJob = defineJobType({
  name: 'hang',
  input: z.object({ ms: z.int(), firstOnly: z.boolean().default(false) }),
  attempts: 2,
  backoffMs: 50,
  timeoutMs: 2000,
  handler: async ({ ms, firstOnly }, ctx) => {
    await redis.incr(runs(ctx.taskId));
    ctx.signal.addEventListener('abort', () => void redis.set(aborted(ctx.taskId), Date.now()));
    if (!firstOnly || ctx.attempt === 1) await new Promise((r) => setTimeout(r, ms));
    return { late: ctx.attempt };
  },
});

/** Rejects with its own error as soon as its signal aborts (as fetch or a stream would). */
const brittleJob = defineJobType({
  name: 'brittle',
  input: z.object({}),
  handler: (_input, ctx) =>
    new Promise((_resolve, reject) => {
      void redis.incr(runs(ctx.taskId));
      ctx.signal.addEventListener('abort', () => reject(new Error('aborted by signal')));
    }),
});

beforeAll(async () => {
  api = await startInProcessApi({ register: false });
  worker = createWorker({
    ...workerRedis(),
    prefix: api.prefix,
    jobs: [tickJob, hangJob, brittleJob],
    logger: pino({ level: 'silent' }),
    webhooks: false,
    reconcile: false,
    runningMarkMs: 0,
  });
  await worker.start();
});
afterAll(async () => {
  await worker?.close();
  await api?.close();
  redis.disconnect();
});

async function submit(body: Record<string, unknown>) {
  return waitFor(
    async () => {
      const res = await api.http('POST', '/v1/jobs', { body });
      // Until the worker's registration is read, the type is unknown (400 naming `type`).
      return res.status === 400 && res.body.errors?.[0]?.path === 'type' ? undefined : res;
    },
    { what: `a ${String(body.type)} submit answered` },
  );
}

const handle = async (id: string) => (await api.http('GET', `/v1/jobs/${id}`)).body;
const settled = (id: string, timeoutMs = 15_000) =>
  waitFor(
    async () => {
      const h = await handle(id);
      return ['completed', 'failed', 'cancelled'].includes(h.status as string) ? h : undefined;
    },
    { what: `task ${id} finished`, timeoutMs },
  );
const runCount = async (id: string) => Number((await redis.get(runs(id))) ?? 0);

describe('delayed start', () => {
  it('waits, "scheduled", until delayMs has passed, then runs', async () => {
    const res = await submit({ type: 'tick', delayMs: 1500 });
    expect(res.status).toBe(202);
    const id = res.body.taskId as string;
    expect(res.body).toMatchObject({ status: 'working', statusMessage: 'scheduled' });
    await new Promise((r) => setTimeout(r, 700));
    expect(await handle(id)).toMatchObject({ status: 'working', statusMessage: 'scheduled' });
    expect(await runCount(id)).toBe(0);
    const done = await settled(id);
    expect(done.status).toBe('completed');
    expect(await runCount(id)).toBe(1);
    expect(Date.parse(done.lastUpdatedAt as string)).toBeGreaterThanOrEqual(
      Date.parse(done.createdAt as string) + 1500,
    );
  });

  it('runs at runAt; a runAt in the past runs at once', async () => {
    const later = await submit({ type: 'tick', runAt: new Date(Date.now() + 1200).toISOString() });
    const past = await submit({ type: 'tick', runAt: '2020-01-01T00:00:00Z' });
    expect(later.body.statusMessage).toBe('scheduled');
    expect(past.body.statusMessage).not.toBe('scheduled');
    const pastDone = await settled(past.body.taskId as string);
    expect(pastDone.status).toBe('completed');
    expect(await runCount(later.body.taskId as string)).toBe(0);
    expect((await settled(later.body.taskId as string)).status).toBe('completed');
  });

  it('refuses a start after the ttl, and delayMs with runAt, with 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'tick', delayMs: 5000, ttlMs: 5000 }, 'delayMs'],
      [{ type: 'tick', runAt: new Date(Date.now() + 60_000).toISOString(), ttlMs: 5000 }, 'runAt'],
      [{ type: 'tick', delayMs: 10, runAt: '2030-01-01T00:00:00Z' }, 'runAt'],
      [{ type: 'tick', runAt: 'tomorrow' }, 'runAt'],
      [{ type: 'tick', delayMs: -1 }, 'delayMs'],
    ];
    for (const [body, path] of cases) {
      const res = await submit(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
  });

  it('a delayed task cancelled before it starts never runs', async () => {
    const res = await submit({ type: 'tick', delayMs: 800 });
    const id = res.body.taskId as string;
    const cancelled = await api.http('POST', `/v1/jobs/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    await new Promise((r) => setTimeout(r, 1800));
    expect(await runCount(id)).toBe(0);
    expect((await handle(id)).status).toBe('cancelled');
  });
});

describe('run timeouts', () => {
  it("aborts a run past the task's timeoutMs, fails it with code timeout, refuses its late result", async () => {
    const res = await submit({ type: 'hang', input: { ms: 2500 }, timeoutMs: 400 });
    expect(res.status).toBe(202);
    const id = res.body.taskId as string;
    const done = await settled(id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'timeout' });
    expect((done.error as { message: string }).message).toMatch(/longer than its 400 ms timeout/);
    // Both attempts ran and timed out (the type allows 2), and each run's signal aborted.
    expect(await runCount(id)).toBe(2);
    expect(await redis.get(aborted(id))).not.toBeNull();
    // The handlers finish later: their results are not recorded.
    await new Promise((r) => setTimeout(r, 2800));
    const after = await handle(id);
    expect(after.status).toBe('failed');
    expect(after.result).toBeUndefined();
  });

  it("applies the job type's timeout when the submit gives none, and retries a timed-out run", async () => {
    const res = await submit({ type: 'hang', input: { ms: 5000, firstOnly: true } });
    const id = res.body.taskId as string;
    const done = await settled(id, 20_000);
    // The first attempt hung past the type's 2 s; the second finished at once.
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({ late: 2 });
    expect(await runCount(id)).toBe(2);
  });

  it('a timed-out handler that rejects on its signal is failed as timed out, not left working', async () => {
    const res = await submit({ type: 'brittle', timeoutMs: 300 });
    const done = await settled(res.body.taskId as string, 10_000);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'timeout' });
  });

  it('a cancelled run that then passes its timeout stays cancelled (no retry of a cancelled task)', async () => {
    const res = await submit({ type: 'hang', input: { ms: 1500 }, timeoutMs: 700 });
    const id = res.body.taskId as string;
    await waitFor(async () => ((await runCount(id)) >= 1 ? true : undefined), {
      what: 'the run started',
    });
    expect((await api.http('POST', `/v1/jobs/${id}/cancel`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2500));
    expect(await runCount(id)).toBe(1); // no second attempt
    expect((await handle(id)).status).toBe('cancelled');
  });

  it("refuses a timeoutMs over the job type's own with 400", async () => {
    const res = await submit({ type: 'hang', input: { ms: 1 }, timeoutMs: 2001 });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ path: 'timeoutMs' });
    expect(res.body.errors[0].message).toMatch(/2000 ms/);
  });
});
