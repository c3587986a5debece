import { describe, expect, it } from 'vitest';
import { httpClient, waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { promptReceiver } from './helpers/receivers.js';
import {
  KEY_A,
  KEY_B,
  startInProcessApi,
  startWorker,
  type InProcessApi,
} from './helpers/service.js';
import { readSse } from './helpers/sse.js';
import {
  stopAfterEach,
  submitTask,
  terminal,
  untilHandle,
  type HandleJson,
} from './helpers/tasks.js';

// A durable task's steps stay bounded (issue 40, item 6): recording one costs the same at step
// 1 000 as at step 10, a task records at most LONGRUN_MAX_STEPS `ctx.step` calls, the handle
// carries the newest 50 steps and `stepCount`, `GET /v1/jobs/{id}/steps` pages all of them, list
// items carry none and an event carries only the step it changed. And a sleep in progress shows
// as `waiting` until it ends (item 8). Real API in this process, real worker processes running
// the stock `durable` job type.

const started = stopAfterEach();

async function api(opts: { webhookAllow?: string[] } = {}): Promise<InProcessApi> {
  return started.api(await startInProcessApi(opts));
}

async function worker(prefix: string, env: Record<string, string> = {}): Promise<Proc> {
  return started.proc(await startWorker(prefix, env));
}

const submit = submitTask;
type Json = HandleJson;
const until = (a: InProcessApi, id: string, check: (h: Json) => boolean, what: string) =>
  untilHandle(a, id, check, what);

describe('durable steps: the handle, the steps route, list items and events', () => {
  it('the handle holds the newest 50 steps and stepCount; /steps pages all of them, oldest first', async () => {
    const a = await api();
    await worker(a.prefix);
    const id = await submit(a, { type: 'durable', input: { steps: 120, quiet: true } });
    const done = await until(a, id, terminal, 'terminal');
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.stepCount).toBe(121);
    expect(done.steps).toHaveLength(50);
    expect(done.steps[0]).toEqual({
      name: 's72',
      status: 'completed',
      endedAt: expect.any(String),
    });
    expect(done.steps.at(-1).name).toBe('last');

    const names: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? '?limit=50' : `?limit=50&cursor=${cursor}`;
      const page = await a.http('GET', `/v1/jobs/${id}/steps${query}`);
      expect(page.status, page.text).toBe(200);
      expect(page.body.stepCount).toBe(121);
      names.push(...page.body.steps.map((s: { name: string }) => s.name));
      cursor = page.body.nextCursor;
      pages += 1;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(names).toEqual([...Array.from({ length: 120 }, (_, i) => `s${i + 1}`), 'last']);
    const all = await a.http('GET', `/v1/jobs/${id}/steps`);
    expect(all.body.steps).toHaveLength(100); // the default limit
  });

  it("/steps is the tenant's only (404 for another), and a bad cursor or limit is 400", async () => {
    const a = await api();
    await worker(a.prefix);
    const id = await submit(a, { type: 'durable', input: { steps: 2, quiet: true } });
    await until(a, id, terminal, 'terminal');
    const other = await httpClient(a.url, KEY_B)('GET', `/v1/jobs/${id}/steps`);
    expect(other.status, other.text).toBe(404);
    expect(other.headers.get('content-type')).toContain('application/problem+json');
    const missing = await a.http('GET', `/v1/jobs/00000000-0000-4000-8000-000000000000/steps`);
    expect(missing.status).toBe(404);
    for (const query of ['cursor=nope!', 'cursor=AAAA', 'limit=0', 'limit=1001', 'limit=x']) {
      const bad = await a.http('GET', `/v1/jobs/${id}/steps?${query}`);
      expect(bad.status, `${query}: ${bad.text}`).toBe(400);
      expect(bad.headers.get('content-type')).toContain('application/problem+json');
    }
    const plain = await a.http('GET', '/v1/jobs/abc/steps');
    expect(plain.status).toBe(404);
    const ok = await a.http('GET', `/v1/jobs/${id}/steps?limit=1000`);
    expect(ok.body).toEqual({
      steps: [
        { name: 's1', status: 'completed', endedAt: expect.any(String) },
        { name: 's2', status: 'completed', endedAt: expect.any(String) },
        { name: 'last', status: 'completed', endedAt: expect.any(String) },
      ],
      stepCount: 3,
      nextCursor: null,
    });
  });

  it('list items carry no steps, summary or full', async () => {
    const a = await api();
    await worker(a.prefix);
    const id = await submit(a, { type: 'durable', input: { steps: 3, quiet: true } });
    await until(a, id, terminal, 'terminal');
    for (const view of ['summary', 'full']) {
      const list = await a.http('GET', `/v1/jobs?limit=100&view=${view}`);
      expect(list.status, list.text).toBe(200);
      const item = list.body.tasks.find((t: { taskId: string }) => t.taskId === id);
      expect(item).toBeDefined();
      expect(item).not.toHaveProperty('steps');
    }
  });

  it('an SSE event carries the step it recorded, not the whole list', async () => {
    const a = await api();
    await worker(a.prefix);
    const id = await submit(a, { type: 'durable', input: { steps: 30, quiet: true } });
    await until(a, id, terminal, 'terminal');
    const sse = await readSse(`${a.url}/v1/jobs/${id}/events?lastEventId=0`, { key: KEY_A });
    expect(sse.status).toBe(200);
    const handles: Json[] = sse.events.map((e) => JSON.parse(e.data));
    const stepped = handles.filter((h) => String(h.statusMessage).startsWith('step '));
    expect(stepped).toHaveLength(31);
    for (const h of handles) expect(h).not.toHaveProperty('steps');
    for (const h of stepped) {
      const name = String(h.statusMessage).split(' ')[1];
      expect(h.step).toEqual({ name, status: 'completed', endedAt: expect.any(String) });
    }
  });

  it('a webhook delivery (task.updated) of a step carries that step', async () => {
    const hooks = await promptReceiver();
    try {
      const a = await api({ webhookAllow: ['127.0.0.1'] });
      await worker(a.prefix, { LONGRUN_WEBHOOK_ALLOW: '127.0.0.1' });
      const id = await submit(a, {
        type: 'durable',
        input: { steps: 2, quiet: true },
        callback: { url: hooks.url },
      });
      await until(a, id, terminal, 'terminal');
      const seen = () => hooks.deliveries.map((d) => (JSON.parse(d.body) as { task: Json }).task);
      await waitFor(async () => seen().length >= 4 || undefined, { what: 'the deliveries' });
      const s2 = seen().find((t) => t.statusMessage === 'step s2 completed');
      expect(s2.step).toMatchObject({ name: 's2', status: 'completed' });
      expect(s2).not.toHaveProperty('steps');
    } finally {
      await hooks.close();
    }
  });
});

describe('durable steps: LONGRUN_MAX_STEPS', () => {
  it('past LONGRUN_MAX_STEPS ctx.step calls the step throws too-many-steps and the task fails', async () => {
    const a = await api();
    await worker(a.prefix, { LONGRUN_MAX_STEPS: '5' });
    // 4 steps, a sleep (not counted) and `last`: five ctx.step calls, at the limit.
    const fits = await submit(a, {
      type: 'durable',
      input: { steps: 4, sleepMs: 10, quiet: true },
    });
    // 5 steps and `last`: the sixth call is one too many.
    const over = await submit(a, { type: 'durable', input: { steps: 5, quiet: true } });
    const ok = await until(a, fits, terminal, 'terminal');
    expect(ok.status, JSON.stringify(ok.error)).toBe('completed');
    // A short sleep ends completed too (however soon the run went past it).
    expect(ok.steps.find((s: { name: string }) => s.name === '$sleep:1').status).toBe('completed');
    const failed = await until(a, over, terminal, 'terminal');
    expect(failed.status).toBe('failed');
    expect(failed.error.code).toBe('too-many-steps');
    expect(failed.error.message).toMatch(/LONGRUN_MAX_STEPS/);
    expect(failed.stepCount).toBe(5);
  });

  it('at the default (1 000), the 1 001st step fails the task', async () => {
    const a = await api();
    await worker(a.prefix);
    const id = await submit(a, { type: 'durable', input: { steps: 1000, quiet: true } });
    const done = await until(a, id, terminal, 'terminal');
    expect(done.status).toBe('failed');
    expect(done.error.code).toBe('too-many-steps');
    expect(done.stepCount).toBe(1000);
    expect(done.steps).toHaveLength(50);
    expect(done.steps.at(-1).name).toBe('s1000');
  }, 60_000);
});

describe('durable steps: a sleep in progress (item 8)', () => {
  it('shows waiting with until, then completed when it ended; lastUpdatedAt never in the future', async () => {
    const a = await api();
    await worker(a.prefix);
    const id = await submit(a, {
      type: 'durable',
      input: { steps: 1, sleepMs: 2000, quiet: true },
    });
    const sleeping = await until(
      a,
      id,
      (h) => String(h.statusMessage).startsWith('sleeping until'),
      'sleeping',
    );
    const seenAt = Date.now();
    expect(Date.parse(sleeping.lastUpdatedAt)).toBeLessThanOrEqual(seenAt);
    const sleep = sleeping.steps.find((s: { name: string }) => s.name === '$sleep:1');
    expect(sleep).toEqual({ name: '$sleep:1', status: 'waiting', until: expect.any(String) });
    expect(Date.parse(sleep.until)).toBeGreaterThan(Date.parse(sleeping.lastUpdatedAt));
    const done = await until(a, id, terminal, 'terminal');
    expect(done.status).toBe('completed');
    const ended = done.steps.find((s: { name: string }) => s.name === '$sleep:1');
    expect(ended).toEqual({ name: '$sleep:1', status: 'completed', endedAt: expect.any(String) });
    // Ended when the run went on past it: not before the time it slept until.
    expect(Date.parse(ended.endedAt)).toBeGreaterThanOrEqual(Date.parse(sleep.until));
    expect(Date.parse(ended.endedAt)).toBeLessThanOrEqual(Date.parse(done.lastUpdatedAt));
  });
});
