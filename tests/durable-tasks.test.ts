import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '@longrun/client';
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

// Durable tasks (issue 29) end to end: the real API in this process, real worker processes
// running the stock `durable` job type (apps/worker/src/jobs/durable.ts), the real Redis.

/** Short locks so a killed worker's job is recovered in about a second. */
const FAST_STALL = { LONGRUN_LOCK_DURATION_MS: '1000', LONGRUN_STALLED_INTERVAL_MS: '500' };

const apis: InProcessApi[] = [];
const procs: Proc[] = [];
afterEach(async () => {
  await Promise.allSettled(procs.splice(0).map((p) => p.kill()));
  await Promise.allSettled(apis.splice(0).map((a) => a.close()));
});

async function api(opts: { shards?: number; webhookAllow?: string[] } = {}): Promise<InProcessApi> {
  const started = await startInProcessApi(opts);
  apis.push(started);
  return started;
}

async function worker(prefix: string, env: Record<string, string> = {}): Promise<Proc> {
  const started = await startWorker(prefix, env);
  procs.push(started);
  return started;
}

async function submit(a: InProcessApi, body: unknown): Promise<string> {
  const res = await a.http('POST', '/v1/jobs', { body });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId as string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a task handle as JSON
async function handle(a: InProcessApi, id: string): Promise<any> {
  const res = await a.http('GET', `/v1/jobs/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function until(
  a: InProcessApi,
  id: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a task handle as JSON
  check: (h: any) => boolean,
  what: string,
  timeoutMs = 20_000,
) {
  return waitFor(
    async () => {
      const h = await handle(a, id);
      return check(h) ? h : undefined;
    },
    { timeoutMs, intervalMs: 50, what: `task ${id}: ${what}` },
  );
}

const terminal = (h: { status: string }) => ['completed', 'failed', 'cancelled'].includes(h.status);

/** The statusMessages of a task's history, oldest first. */
async function messages(a: InProcessApi, id: string): Promise<string[]> {
  const log = a.parts.shardOf(id).log;
  const out: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await log.events(id, after, 500);
    if (page.length === 0) return out;
    out.push(...page.map((e) => e.statusMessage));
    after = page.at(-1)!.id;
  }
}

const count = (list: string[], message: string) => list.filter((m) => m === message).length;

describe('durable tasks: steps', () => {
  it('a finished step does not run again after its worker is SIGKILLed; the interrupted one does', async () => {
    const a = await api();
    const first = await worker(a.prefix, FAST_STALL);
    const id = await submit(a, {
      type: 'durable',
      input: { steps: 3, holdStep: 2, holdMs: 60_000 },
    });
    await until(a, id, (h) => h.statusMessage === 's2 running', 'step 2 running');
    await first.kill();
    // Another worker takes it over once the lock expires: step 2 (never finished) runs again.
    const second = await worker(a.prefix, FAST_STALL);
    await waitFor(
      async () =>
        (await messages(a, id)).filter((m) => m === 's2 running').length >= 2 ? true : undefined,
      { timeoutMs: 20_000, intervalMs: 100, what: 'step 2 to run again' },
    );
    await second.kill();
    const history = await messages(a, id);
    expect(count(history, 's1 running')).toBe(1);
    expect(count(history, 'step s1 completed')).toBe(1);
    expect(count(history, 's2 running')).toBeGreaterThanOrEqual(2);
    expect(count(history, 'step s2 completed')).toBe(0);
    const h = await handle(a, id);
    expect(h.status).toBe('working');
    expect(h.steps).toEqual([{ name: 's1', status: 'completed', endedAt: expect.any(String) }]);
  });

  it('replays finished steps after a crash, then completes with their stored results', async () => {
    const a = await api();
    const first = await worker(a.prefix, FAST_STALL);
    // Step 3 holds 1.5 s in every run: the first is killed in it, the next one finishes it.
    const id = await submit(a, {
      type: 'durable',
      input: { steps: 3, holdStep: 3, holdMs: 1500 },
    });
    await until(a, id, (h) => h.statusMessage === 's3 running', 'step 3 running');
    const before = (await handle(a, id)).steps;
    expect(before.map((s: { name: string }) => s.name)).toEqual(['s1', 's2']);
    await first.kill();
    await worker(a.prefix, FAST_STALL);
    const done = await until(a, id, terminal, 'terminal', 30_000);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    const history = await messages(a, id);
    expect(count(history, 's1 running')).toBe(1);
    expect(count(history, 's2 running')).toBe(1);
    expect(count(history, 's3 running')).toBe(2);
    expect(count(history, 'step s3 completed')).toBe(1);
    // The results of the steps before the crash are the stored ones, not new ones.
    expect(done.result.steps[0]).toEqual(JSON.parse(JSON.stringify(done.result.steps[0])));
    expect(done.steps.map((s: { name: string }) => s.name)).toEqual(['s1', 's2', 's3', 'last']);
  });

  it('each recorded step is a webhook delivery (task.updated) carrying that step', async () => {
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
      // Each delivery is the handle as of its event (status and message), with the step it
      // recorded (issue 40: not the whole list, tests/durable-steps.test.ts).
      const seen = () =>
        hooks.deliveries.map(
          (d) => (JSON.parse(d.body) as { task: { status: string; statusMessage: string } }).task,
        );
      // s1, s2 and last each deliver while the task stays working, then the completion.
      await waitFor(async () => seen().length >= 4 || undefined, { what: 'the deliveries' });
      const messages = seen().map((t) => `${t.status}: ${t.statusMessage}`);
      expect(messages).toEqual(
        expect.arrayContaining([
          'working: step s1 completed',
          'working: step s2 completed',
          'working: step last completed',
        ]),
      );
      expect(seen().filter((t) => t.status === 'completed')).toHaveLength(1);
    } finally {
      await hooks.close();
    }
  });

  it('a repeated step name fails the task with step-name-repeated', async () => {
    const a = await api();
    await worker(a.prefix);
    const id = await submit(a, { type: 'durable', input: { steps: 1, repeatStep: true } });
    const done = await until(a, id, terminal, 'terminal');
    expect(done.status).toBe('failed');
    expect(done.error.code).toBe('step-name-repeated');
    expect(done.error.message).toContain('"s1"');
  });

  it('a step result over LONGRUN_MAX_RESULT_BYTES fails the task with step-result-too-large', async () => {
    const a = await api();
    await worker(a.prefix, { LONGRUN_MAX_RESULT_BYTES: '1000' });
    const id = await submit(a, { type: 'durable', input: { steps: 1, bigStepBytes: 5000 } });
    const done = await until(a, id, terminal, 'terminal');
    expect(done.status).toBe('failed');
    expect(done.error.code).toBe('step-result-too-large');
    expect(done.steps.map((s: { name: string }) => s.name)).toEqual(['s1']);
  });

  it('requestInput composes with steps: the steps before it do not run again once answered', async () => {
    const a = await api();
    await worker(a.prefix);
    const id = await submit(a, { type: 'durable', input: { steps: 2, ask: true } });
    await until(a, id, (h) => h.status === 'input_required', 'input_required');
    const res = await a.http('POST', `/v1/jobs/${id}/input`, { body: { input: { go: true } } });
    expect(res.status, res.text).toBe(200);
    const done = await until(a, id, terminal, 'terminal');
    expect(done.status).toBe('completed');
    expect(done.result.answer).toEqual({ go: true });
    const history = await messages(a, id);
    expect(count(history, 's1 running')).toBe(1);
    expect(count(history, 's2 running')).toBe(1);
  });
});

describe('durable tasks: sleep', () => {
  it('a sleeping task frees its slot: a worker of concurrency 1 runs another task meanwhile', async () => {
    const a = await api();
    await worker(a.prefix, { LONGRUN_WORKER_CONCURRENCY: '1' });
    const id = await submit(a, { type: 'durable', input: { steps: 1, sleepMs: 3000 } });
    const sleeping = await until(
      a,
      id,
      (h) => String(h.statusMessage).startsWith('sleeping until'),
      'sleeping',
    );
    expect(sleeping.status).toBe('working');
    const other = await submit(a, { type: 'echo', input: { meanwhile: true } });
    const echoed = await until(a, other, terminal, 'echo terminal');
    expect(echoed.status).toBe('completed');
    // The sleeper had not finished when the other task did: it held no slot.
    expect((await handle(a, id)).status).toBe('working');
    const done = await until(a, id, terminal, 'terminal');
    expect(done.status).toBe('completed');
    expect(count(await messages(a, id), 's1 running')).toBe(1);
  });

  it('a sleep that would end after the task expires fails it with sleep-past-expiry', async () => {
    const a = await api();
    await worker(a.prefix);
    const id = await submit(a, {
      type: 'durable',
      input: { steps: 1, sleepMs: 120_000 },
      ttlMs: 60_000,
    });
    const done = await until(a, id, terminal, 'terminal');
    expect(done.status).toBe('failed');
    expect(done.error.code).toBe('sleep-past-expiry');
  });

  it('cancel works while a task sleeps, and it never runs again', async () => {
    const a = await api();
    await worker(a.prefix);
    const id = await submit(a, { type: 'durable', input: { steps: 1, sleepMs: 1500 } });
    await until(a, id, (h) => String(h.statusMessage).startsWith('sleeping until'), 'sleeping');
    const res = await a.http('POST', `/v1/jobs/${id}/cancel`);
    expect(res.status, res.text).toBe(200);
    await new Promise((r) => setTimeout(r, 2500));
    const h = await handle(a, id);
    expect(h.status).toBe('cancelled');
    expect(count(await messages(a, id), 'step last completed')).toBe(0);
  });
});

describe('durable tasks: waitpoints', () => {
  it('completes by HTTP with the data; another tenant gets 404, a second completion 409', async () => {
    const a = await api();
    await worker(a.prefix);
    const id = await submit(a, { type: 'durable', input: { waitpointTimeoutMs: 60_000 } });
    await until(
      a,
      id,
      (h) => String(h.statusMessage).startsWith('waiting for waitpoint'),
      'waiting on its waitpoint',
    );
    const wp = `${id}.1`;
    const other = await httpClient(a.url, KEY_B)('POST', `/v1/waitpoints/${wp}`, {
      body: { data: { paid: false } },
    });
    expect(other.status, other.text).toBe(404);
    expect(other.headers.get('content-type')).toContain('application/problem+json');
    const bad = await a.http('POST', `/v1/waitpoints/${wp}`, { body: { nodata: 1 } });
    expect(bad.status, bad.text).toBe(400);
    const ok = await a.http('POST', `/v1/waitpoints/${wp}`, { body: { data: { paid: true } } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toEqual({ waitpointId: wp, taskId: id, status: 'completed' });
    const again = await a.http('POST', `/v1/waitpoints/${wp}`, { body: { data: { paid: 2 } } });
    expect(again.status, again.text).toBe(409);
    const done = await until(a, id, terminal, 'terminal');
    expect(done.status).toBe('completed');
    expect(done.result.data).toEqual({ paid: true });
    const unknown = await a.http('POST', `/v1/waitpoints/${id}.7`, { body: { data: 1 } });
    expect(unknown.status).toBe(404);
    const junk = await a.http('POST', '/v1/waitpoints/nope', { body: { data: 1 } });
    expect(junk.status).toBe(404);
  });

  it('the client SDK completes a waitpoint (completeWaitpoint), and says 409 for a second time', async () => {
    const a = await api();
    await worker(a.prefix);
    const id = await submit(a, { type: 'durable', input: { waitpointTimeoutMs: 60_000 } });
    await until(
      a,
      id,
      (h) => String(h.statusMessage).startsWith('waiting for waitpoint'),
      'waiting',
    );
    const client = createClient({ baseUrl: a.url, apiKey: KEY_A });
    expect(await client.completeWaitpoint(`${id}.1`, { via: 'sdk' })).toEqual({
      waitpointId: `${id}.1`,
      taskId: id,
      status: 'completed',
    });
    await expect(client.completeWaitpoint(`${id}.1`, 2)).rejects.toMatchObject({ status: 409 });
    const done = await until(a, id, terminal, 'terminal');
    expect(done.result.data).toEqual({ via: 'sdk' });
  });

  it('times out: the task fails with waitpoint-timeout', async () => {
    const a = await api();
    await worker(a.prefix);
    const id = await submit(a, { type: 'durable', input: { waitpointTimeoutMs: 1000 } });
    const done = await until(a, id, terminal, 'terminal');
    expect(done.status).toBe('failed');
    expect(done.error.code).toBe('waitpoint-timeout');
    // Its task is finished: the waitpoint can no longer be completed.
    const late = await a.http('POST', `/v1/waitpoints/${id}.1`, { body: { data: 1 } });
    expect(late.status, late.text).toBe(409);
    expect(late.body.taskStatus).toBe('failed');
  });
});

describe('durable tasks: children', () => {
  for (const shards of [1, 4]) {
    it(`50 parents of 10 children each complete on workers of concurrency 4 (${shards} shard${shards > 1 ? 's' : ''})`, async () => {
      const a = await api({ shards });
      const env = { LONGRUN_WORKER_CONCURRENCY: '4', LONGRUN_SHARDS: String(shards) };
      await worker(a.prefix, env);
      await worker(a.prefix, env);
      const parents: string[] = [];
      for (let i = 0; i < 50; i++)
        parents.push(await submit(a, { type: 'durable', input: { children: 10 } }));
      for (const id of parents) {
        const done = await until(a, id, terminal, 'terminal', 90_000);
        expect(done.status, JSON.stringify(done)).toBe('completed');
        expect(done.childTaskIds, JSON.stringify(done)).toHaveLength(10);
        expect(done.result.children).toHaveLength(10);
        done.result.children.forEach(
          (c: { taskId: string; status: string; result: unknown }, i: number) => {
            expect(c).toEqual({
              taskId: done.childTaskIds[i],
              status: 'completed',
              result: { child: i },
            });
          },
        );
      }
      const child = await handle(a, (await handle(a, parents[0]!)).childTaskIds[0]);
      expect(child.parentTaskId).toBe(parents[0]);
      if (shards > 1) {
        const used = new Set(
          (await handle(a, parents[0]!)).childTaskIds.map((c: string) => a.parts.shardOf(c).number),
        );
        expect(used.size).toBeGreaterThan(1);
      }
    }, 150_000);
  }

  it('cancelling a parent cancels its open children', async () => {
    const a = await api();
    await worker(a.prefix, { LONGRUN_WORKER_CONCURRENCY: '4' });
    const id = await submit(a, { type: 'durable', input: { children: 3, childSleepMs: 60_000 } });
    const waiting = await until(
      a,
      id,
      (h) => String(h.statusMessage).startsWith('waiting for 3 of 3 child tasks'),
      'waiting on its children',
    );
    expect(waiting.childTaskIds).toHaveLength(3);
    const res = await a.http('POST', `/v1/jobs/${id}/cancel`);
    expect(res.status, res.text).toBe(200);
    for (const child of waiting.childTaskIds as string[]) {
      const h = await until(a, child, terminal, 'child terminal');
      expect(h.status).toBe('cancelled');
      expect(h.parentTaskId).toBe(id);
    }
  });

  it("a child's failure is an outcome; with failOnChildFailure it fails the parent with child-failed", async () => {
    const a = await api();
    await worker(a.prefix, { LONGRUN_WORKER_CONCURRENCY: '4' });
    // A child that runs longer than the parent waits is cancelled by hand: the parent sees it.
    const soft = await submit(a, { type: 'durable', input: { children: 1, childSleepMs: 60_000 } });
    const hard = await submit(a, {
      type: 'durable',
      input: { children: 1, childSleepMs: 60_000, failOnChildFailure: true },
    });
    for (const id of [soft, hard]) {
      const h = await until(
        a,
        id,
        (x) => x.childTaskIds?.length === 1 && x.statusMessage.startsWith('waiting'),
        'a child',
      );
      const res = await a.http('POST', `/v1/jobs/${h.childTaskIds[0]}/cancel`);
      expect(res.status, res.text).toBe(200);
    }
    const softDone = await until(a, soft, terminal, 'terminal');
    expect(softDone.status).toBe('completed');
    expect(softDone.result.children[0]).toMatchObject({
      status: 'cancelled',
      error: { code: 'cancelled' },
    });
    const hardDone = await until(a, hard, terminal, 'terminal');
    expect(hardDone.status).toBe('failed');
    expect(hardDone.error.code).toBe('child-failed');
  });
});
