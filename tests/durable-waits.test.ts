import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createRedis } from '@longrun/engine/internal';
import { waitFor } from './helpers/http.js';
import { startScript, type Proc } from './helpers/processes.js';
import { promptReceiver } from './helpers/receivers.js';
import { startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';
import {
  stopAfterEach,
  submitTask,
  terminal,
  untilHandle,
  type HandleJson,
} from './helpers/tasks.js';

// Durable waits keep their promises (issue 40, items 1 and 2): a waitpoint has exactly one
// outcome, data or timeout, whatever the clocks and whoever asks first; a handler's own
// try/catch cannot swallow a park; a task never vanishes while it waits. The real API in this
// process, real worker processes (tests/fixtures/durable-worker.mjs and the stock worker), the
// real Redis.

const root = resolve(import.meta.dirname, '..');
/** Reads a record's own fields and expiry (this file runs on one Redis, not the cluster suite). */
const raw = createRedis(inject('redisUrl'), 'producer');
raw.on('error', () => undefined);
afterAll(() => raw.disconnect());
const started = stopAfterEach();

async function api(opts: { webhookAllow?: string[] } = {}): Promise<InProcessApi> {
  return started.api(await startInProcessApi(opts));
}

/** The fixture worker (order, nap) on `prefix`. */
async function fixtureWorker(prefix: string, env: Record<string, string> = {}): Promise<Proc> {
  return started.proc(
    await startScript(
      'tests/fixtures/durable-worker.mjs',
      { REDIS_URL: inject('redisUrl'), LONGRUN_PREFIX: prefix, ...env },
      { cwd: root, timeoutMs: 20_000 },
    ),
  );
}

const submit = submitTask;
const until = (a: InProcessApi, id: string, check: (h: HandleJson) => boolean, what: string) =>
  untilHandle(a, id, check, what, 40_000);
const waiting = (h: { statusMessage?: string }) =>
  String(h.statusMessage).startsWith('waiting for waitpoint');
const stepNames = (h: { steps?: { name: string }[] }) => (h.steps ?? []).map((s) => s.name);

describe(
  'durable waits: a waitpoint has one outcome (issue 40, item 1)',
  { timeout: 60_000 },
  () => {
    it('a catch-all around waitFor does not swallow the park: data posted in time reaches it', async () => {
      const a = await api();
      await fixtureWorker(a.prefix);
      const id = await submit(a, { type: 'order', input: { timeoutMs: 60_000 } });
      await until(a, id, waiting, 'waiting on its waitpoint');
      // Parked, not run on past the catch: no branch was taken yet.
      await sleep(300);
      const parked = await until(a, id, () => true, 'read');
      expect(parked.status).toBe('working');
      expect(stepNames(parked)).not.toContain('cancel-order');
      const ok = await a.http('POST', `/v1/waitpoints/${id}.1`, { body: { data: { paid: 42 } } });
      expect(ok.status, ok.text).toBe(200);
      const done = await until(a, id, terminal, 'terminal');
      expect(done.status, JSON.stringify(done)).toBe('completed');
      expect(done.result).toEqual({ paid: { paid: 42 }, shipped: { shipped: { paid: 42 } } });
      expect(stepNames(done)).toContain('ship-order');
      expect(stepNames(done)).not.toContain('cancel-order');
    });

    it('after the handler took the timeout branch, a completion answers 409 waitpoint-timed-out and the handler never sees it', async () => {
      const a = await api();
      await fixtureWorker(a.prefix);
      const id = await submit(a, { type: 'order', input: { timeoutMs: 800, sleepMs: 2000 } });
      // The timeout branch: cancel-order recorded, then a sleep.
      await until(a, id, (h) => stepNames(h).includes('cancel-order'), 'the timeout branch');
      const late = await a.http('POST', `/v1/waitpoints/${id}.1`, { body: { data: { paid: 1 } } });
      expect(late.status, late.text).toBe(409);
      expect(late.body.type).toMatch(/waitpoint-timed-out$/);
      expect(late.headers.get('content-type')).toContain('application/problem+json');
      const done = await until(a, id, terminal, 'terminal');
      expect(done.status, JSON.stringify(done)).toBe('completed');
      expect(done.result).toEqual({ paid: null, cancelled: { cancelled: true } });
      expect(stepNames(done)).not.toContain('ship-order');
    });

    it('once timeoutMs has passed, a completion answers 409 even before the handler ran again; the handler then times out', async () => {
      const a = await api();
      const w = await fixtureWorker(a.prefix);
      const id = await submit(a, { type: 'order', input: { timeoutMs: 1500 } });
      await until(a, id, waiting, 'waiting on its waitpoint');
      // No worker runs while the timeout passes: nothing has recorded it yet.
      await w.kill();
      const { expiresAt } = await waitpointOf(a, id);
      await sleep(Math.max(0, expiresAt - Date.now()) + 100);
      const late = await a.http('POST', `/v1/waitpoints/${id}.1`, { body: { data: { paid: 1 } } });
      expect(late.status, late.text).toBe(409);
      expect(late.body.type).toMatch(/waitpoint-timed-out$/);
      await fixtureWorker(a.prefix);
      const done = await until(a, id, terminal, 'terminal');
      expect(done.status, JSON.stringify(done)).toBe('completed');
      expect(done.result).toEqual({ paid: null, cancelled: { cancelled: true } });
    });

    it('a catch-all around a sleep does not swallow the park: the step after it runs once the sleep ended', async () => {
      const a = await api();
      await fixtureWorker(a.prefix);
      const id = await submit(a, { type: 'nap', input: { ms: 1500 } });
      const done = await until(a, id, terminal, 'terminal');
      expect(done.status, JSON.stringify(done)).toBe('completed');
      const { until: end, after } = done.result as { until: number; after: number };
      expect(after).toBeGreaterThanOrEqual(end);
    });
  },
);

describe(
  'durable waits: a task never vanishes while it waits (issue 40, item 2)',
  { timeout: 60_000 },
  () => {
    it('a task waiting on a waitpoint without timeout ends failed "expired" at its ttl, announced, and stays readable', async () => {
      const hooks = await promptReceiver();
      try {
        const a = await api({ webhookAllow: ['127.0.0.1'] });
        await fixtureWorker(a.prefix, {
          LONGRUN_EXPIRED_GRACE_MS: '120000',
          LONGRUN_WEBHOOK_ALLOW: '127.0.0.1',
        });
        const id = await submit(a, {
          type: 'order',
          input: {},
          ttlMs: 3000,
          callback: { url: hooks.url },
        });
        await until(a, id, waiting, 'waiting on its waitpoint');
        const done = await until(a, id, terminal, 'terminal');
        expect(done.status, JSON.stringify(done)).toBe('failed');
        expect(done.error.code).toBe('expired');
        // Readable for the grace (120 s here) after it ended, not gone at its ttl.
        await sleep(1500);
        const later = await a.http('GET', `/v1/jobs/${id}`);
        expect(later.status, later.text).toBe(200);
        expect(later.body.status).toBe('failed');
        const ttl = await raw.pttl(a.parts.shardOf(id).store.keys.task(id));
        expect(ttl).toBeGreaterThan(60_000);
        // The terminal event went out as a webhook.
        await waitFor(
          async () =>
            hooks.deliveries.some((d) => JSON.parse(d.body).task?.status === 'failed') || undefined,
          { what: 'the failed delivery' },
        );
      } finally {
        await hooks.close();
      }
    });

    it('the stock durable type waiting past its ttl on children ends "expired" too', async () => {
      const a = await api();
      // Children that sleep longer than their parent lives: the parent waits on them until its ttl.
      started.proc(await startWorker(a.prefix, { LONGRUN_EXPIRED_GRACE_MS: '60000' }));
      const id = await submit(a, {
        type: 'durable',
        input: { children: 1, childSleepMs: 60_000 },
        ttlMs: 3000,
      });
      const done = await until(a, id, terminal, 'terminal');
      expect(done.status, JSON.stringify(done)).toBe('failed');
      expect(done.error.code).toBe('expired');
    });
  },
);

/** The task's first waitpoint, as its step recorded it. */
async function waitpointOf(a: InProcessApi, id: string): Promise<{ expiresAt: number }> {
  const stored = await raw.hget(a.parts.shardOf(id).store.keys.task(id), 'st:$waitpoint:1');
  expect(stored, 'the waitpoint step').toBeTruthy();
  return JSON.parse(stored!) as { expiresAt: number };
}
