import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { readSse } from './helpers/sse.js';
import {
  KEY_A,
  startInProcessApi,
  startWorker,
  type InProcessApi,
  oneShard,
} from './helpers/service.js';

// This file reads and edits one shard's keys and queues.
oneShard();

// The defects found when the task lifecycle had no single owner (issue 10), each tried from
// outside as a user would: HTTP against a real API, real worker processes, one real Redis.

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
});

const redis = new Redis(inject('redisUrl'));
cleanup.push(() => redis.quit());

async function setup(
  env: Record<string, string> = {},
  api: Parameters<typeof startInProcessApi>[0] = {},
): Promise<{ a: InProcessApi; w: Proc }> {
  const a = await startInProcessApi(api);
  cleanup.push(() => a.close());
  const w = await startWorker(a.prefix, env);
  cleanup.push(() => w.stop());
  return { a, w };
}

async function submit(
  a: InProcessApi,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<string> {
  const res = await a.http('POST', '/v1/jobs', { body, headers });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId as string;
}

async function until(a: InProcessApi, id: string, status: string, timeoutMs = 15_000) {
  return waitFor(
    async () => {
      const res = await a.http('GET', `/v1/jobs/${id}`);
      return res.body?.status === status ? res : undefined;
    },
    { what: `${id} ${status}`, timeoutMs },
  );
}

/** Handler runs a worker counted, by outcome (skipped runs never reached a handler). */
async function runs(w: Proc, type: string): Promise<Record<string, number>> {
  const text = await (
    await fetch(`http://127.0.0.1:${w.ready.metricsPort as number}/metrics`)
  ).text();
  const out: Record<string, number> = {};
  const line = new RegExp(
    `^longrun_jobs_processed_total\\{[^}]*type="${type}"[^}]*outcome="([a-z_]+)"[^}]*\\} (\\d+)`,
    'gm',
  );
  for (const m of text.matchAll(line)) out[m[1] as string] = Number(m[2]);
  return out;
}

describe('an idempotent replay', () => {
  it('never runs a task a second time, however many replays race its first run', async () => {
    const { a, w } = await setup();
    const tasks = 4;
    for (let t = 0; t < tasks; t++) {
      const key = `replay-${t}-${Date.now()}`;
      const body = { type: 'sleep', input: { ms: 150 } };
      const id = await submit(a, body, { 'idempotency-key': key });
      const stopAt = Date.now() + 600;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (Date.now() < stopAt) {
            const res = await a.http('POST', '/v1/jobs', {
              body,
              headers: { 'idempotency-key': key },
            });
            expect(res.status).toBe(202);
            expect(res.body.taskId).toBe(id);
          }
        }),
      );
      await until(a, id, 'completed');
    }
    await waitFor(async () => ((await runs(w, 'sleep')).completed ?? 0) >= tasks, {
      what: 'every run counted',
    });
    const counted = await runs(w, 'sleep');
    const handlerRuns = Object.entries(counted)
      .filter(([outcome]) => outcome !== 'skipped')
      .reduce((sum, [, n]) => sum + n, 0);
    expect(counted).toMatchObject({ completed: tasks });
    expect(handlerRuns).toBe(tasks);
  });
});

describe('retries', () => {
  it('a handler error that mentions "stalled" is retried like any other error', async () => {
    const { a } = await setup();
    const id = await submit(a, {
      type: 'flaky',
      input: { failTimes: 1, message: 'upstream connection stalled' },
    });
    const done = await until(a, id, 'completed');
    expect(done.body.result).toEqual({ attempt: 2 });
  });
});

describe('event streams end', () => {
  it('when the task expires while it waits for input', async () => {
    const { a } = await setup();
    const id = await submit(a, {
      type: 'approval',
      input: { question: 'ok?' },
      ttlMs: 1500,
    });
    await until(a, id, 'input_required');
    const started = Date.now();
    const stream = await readSse(`${a.url}/v1/jobs/${id}/events`, {
      key: KEY_A,
      timeoutMs: 12_000,
    });
    expect(stream.status).toBe(200);
    expect(stream.closedByServer).toBe(true);
    // The task expired about 1.5 s after its submit; the stream follows it, not its heartbeat.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('when resumed after the last event of a finished task', async () => {
    const { a } = await setup();
    const id = await submit(a, { type: 'echo', input: { n: 1 } });
    await until(a, id, 'completed');
    const full = await readSse(`${a.url}/v1/jobs/${id}/events?lastEventId=0`, { key: KEY_A });
    const last = full.events.at(-1)?.id;
    expect(last).toBeDefined();
    const resumed = await readSse(`${a.url}/v1/jobs/${id}/events`, {
      key: KEY_A,
      headers: { 'last-event-id': last as string },
      timeoutMs: 10_000,
    });
    expect(resumed.status).toBe(200);
    expect(resumed.events).toEqual([]);
    expect(resumed.closedByServer).toBe(true);
  });
});

describe('listing', () => {
  it('lists summaries: no result, whatever the tasks weigh; ?view=full has it', async () => {
    const { a } = await setup();
    const big = 'x'.repeat(300_000);
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await submit(a, { type: 'echo', input: { big, i } }));
    for (const id of ids) await until(a, id, 'completed');
    const failed = await submit(a, { type: 'fail', input: { message: 'nope' } });
    await until(a, failed, 'failed');

    const page = await a.http('GET', '/v1/jobs?limit=20');
    expect(page.status).toBe(200);
    expect(page.body.tasks).toHaveLength(5);
    for (const task of page.body.tasks) expect(task).not.toHaveProperty('result');
    expect(page.text.length).toBeLessThan(10_000);

    const onlyFailed = await a.http('GET', '/v1/jobs?status=failed&limit=1');
    expect(onlyFailed.body.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([failed]);
    expect(onlyFailed.body.tasks[0].error).toEqual({ message: 'nope' });

    const full = await a.http('GET', '/v1/jobs?limit=2&view=full');
    expect(full.status).toBe(200);
    expect(full.body.tasks[1].result).toEqual({ big, i: 3 });
  });
});

describe('the open-task set', () => {
  it('forgets expired tasks even without a cap', async () => {
    const { a } = await setup({ LONGRUN_WORKER_TYPES: 'echo' }, { maxOpenTasks: 0 });
    // approval tasks nobody answers (no worker runs them here): open until they expire.
    for (let i = 0; i < 5; i++) {
      await submit(a, { type: 'approval', input: { question: 'q' }, ttlMs: 1000 });
    }
    await new Promise((r) => setTimeout(r, 1300));
    await submit(a, { type: 'approval', input: { question: 'q' }, ttlMs: 60_000 });
    expect(await redis.zcard(`${a.prefix}:tenant:alpha:open`)).toBe(1);
  });
});

describe('answering', () => {
  it('wakes a job whose parked copy cannot be promoted', async () => {
    const { a } = await setup();
    const id = await submit(a, { type: 'approval', input: { question: 'ok?' } });
    await until(a, id, 'input_required');
    // The parked job loses its place in the delayed set (as after a partial write): its data is
    // still there, so it exists, but promoting it fails.
    expect(await redis.zrem(`${a.prefix}:tasks.approval:delayed`, id)).toBe(1);
    const res = await a.http('POST', `/v1/jobs/${id}/input`, {
      body: { input: { approved: true } },
    });
    expect(res.status, res.text).toBe(200);
    const done = await until(a, id, 'completed', 10_000);
    expect(done.body.result).toEqual({ approved: true });
  });
});
