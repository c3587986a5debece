import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, type HttpResult } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';

let api: InProcessApi;
let worker: Proc;

beforeAll(async () => {
  api = await startInProcessApi();
  worker = await startWorker(api.prefix, { LONGRUN_WORKER_CONCURRENCY: '4' });
});
afterAll(async () => {
  await worker?.stop();
  await api?.close();
});

async function submit(
  type: string,
  input: unknown,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const res = await api.http('POST', '/v1/jobs', { body: { type, input, ...extra } });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId as string;
}

function until(id: string, pred: (h: HttpResult) => boolean, what: string): Promise<HttpResult> {
  return waitFor(
    async () => {
      const res = await api.http('GET', `/v1/jobs/${id}`);
      return pred(res) ? res : undefined;
    },
    { what: `${id} ${what}` },
  );
}
const status = (id: string, s: string) => until(id, (h) => h.body?.status === s, s);

describe('a task from submit to result', () => {
  it('echo completes; the handle and /result carry the result; Retry-After stops', async () => {
    const id = await submit('echo', { a: [1, 2], b: 'ü' });
    const done = await status(id, 'completed');
    expect(done.body.result).toEqual({ a: [1, 2], b: 'ü' });
    expect(done.headers.get('retry-after')).toBeNull();
    expect(Date.parse(done.body.lastUpdatedAt)).toBeGreaterThanOrEqual(
      Date.parse(done.body.createdAt),
    );
    const result = await api.http('GET', `/v1/jobs/${id}/result`);
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ taskId: id, status: 'completed', result: { a: [1, 2], b: 'ü' } });
  });

  it('fail ends failed, once, with its message', async () => {
    const id = await submit('fail', { message: 'disk on fire' });
    const failed = await status(id, 'failed');
    expect(failed.body.error.message).toBe('disk on fire');
    expect(failed.body.result).toBeUndefined();
    const result = await api.http('GET', `/v1/jobs/${id}/result`);
    expect(result.body).toMatchObject({
      taskId: id,
      status: 'failed',
      error: { message: 'disk on fire' },
    });
  });

  it('answers /result with 409, the status and Retry-After while working', async () => {
    const id = await submit('sleep', { ms: 2000 });
    const res = await api.http('GET', `/v1/jobs/${id}/result`);
    expect(res.status).toBe(409);
    expect(res.body.taskStatus).toBe('working');
    expect(res.headers.get('retry-after')).toBe('1');
    const handle = await api.http('GET', `/v1/jobs/${id}`);
    expect(handle.headers.get('retry-after')).toBe('1');
  });

  it('sleep reports progress and moves lastUpdatedAt', async () => {
    const id = await submit('sleep', { ms: 2500 });
    const progressed = await until(id, (h) => typeof h.body?.progress === 'number', 'progress');
    expect(progressed.body.progress).toBeGreaterThan(0);
    expect(progressed.body.lastUpdatedAt).not.toBe(progressed.body.createdAt);
    const done = await status(id, 'completed');
    expect(done.body.result).toEqual({ sleptMs: 2500 });
    // Done is 100%, not the last report (80): the handle and the last event say so (issue 27).
    expect(done.body.progress).toBe(100);
    const events = await api.http('GET', `/v1/jobs/${id}/events`);
    const last = events.text.trim().split('\n\n').pop() ?? '';
    expect(JSON.parse(/^data: (.*)$/m.exec(last)?.[1] ?? '{}')).toMatchObject({
      status: 'completed',
      progress: 100,
    });
  });
});

describe('cancel', () => {
  it('aborts a running handler in the worker process; the task stays cancelled', async () => {
    const id = await submit('sleep', { ms: 60_000 });
    await until(
      id,
      (h) => h.body?.statusMessage === 'running' || h.body?.progress !== undefined,
      'running',
    );
    const res = await api.http('POST', `/v1/jobs/${id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('cancelled');
    await waitFor(
      async () => worker.lines.some((l) => l.includes(id) && l.includes('aborted running handler')),
      {
        what: 'worker to abort the handler',
      },
    );
    await new Promise((r) => setTimeout(r, 1200));
    const after = await api.http('GET', `/v1/jobs/${id}`);
    expect(after.body.status).toBe('cancelled');
    // The cancel answered the handle as stored (times, progress), not one made up beside it.
    expect(after.body).toEqual(res.body);
    expect((await api.http('GET', `/v1/jobs/${id}/result`)).body.status).toBe('cancelled');
    expect((await api.http('POST', `/v1/jobs/${id}/cancel`)).status).toBe(409);
  });

  it('answers 409 on a terminal task', async () => {
    const id = await submit('echo', {});
    await status(id, 'completed');
    const res = await api.http('POST', `/v1/jobs/${id}/cancel`);
    expect(res.status).toBe(409);
    expect(res.body.taskStatus).toBe('completed');
  });

  it('removes waiting work before any worker takes it', async () => {
    const idle = await startInProcessApi(); // a prefix no worker consumes yet
    try {
      const res = await idle.http('POST', '/v1/jobs', { body: { type: 'echo', input: { x: 1 } } });
      const id = res.body.taskId;
      const cancel = await idle.http('POST', `/v1/jobs/${id}/cancel`);
      expect(cancel.body.status).toBe('cancelled');
      expect(await idle.tasks.queueFor('echo').getJob(id)).toBeUndefined();
      const w = await startWorker(idle.prefix);
      try {
        const echo = (await idle.http('POST', '/v1/jobs', { body: { type: 'echo', input: {} } }))
          .body.taskId;
        await waitFor(
          async () => (await idle.http('GET', `/v1/jobs/${echo}`)).body.status === 'completed',
        );
        expect((await idle.http('GET', `/v1/jobs/${id}`)).body.status).toBe('cancelled');
      } finally {
        await w.stop();
      }
    } finally {
      await idle.close();
    }
  });
});

describe('input_required', () => {
  it('asks, rejects a bad answer (422, unchanged), accepts a good one and completes with it', async () => {
    const id = await submit('approval', { question: 'Deploy to prod?' });
    const waiting = await status(id, 'input_required');
    expect(waiting.body.statusMessage).toBe('Deploy to prod?');
    expect(waiting.body.inputRequest.message).toBe('Deploy to prod?');
    expect(waiting.body.inputRequest.schema).toMatchObject({
      type: 'object',
      properties: { approved: { type: 'boolean' } },
      required: ['approved'],
    });
    expect(waiting.headers.get('retry-after')).toBe('1');

    const bad = await api.http('POST', `/v1/jobs/${id}/input`, {
      body: { input: { approved: 'yes' } },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].path).toBe('input.approved');
    const extra = await api.http('POST', `/v1/jobs/${id}/input`, {
      body: { input: { approved: true, x: 1 } },
    });
    expect(extra.status).toBe(422);
    const envelope = await api.http('POST', `/v1/jobs/${id}/input`, { body: { answer: {} } });
    expect(envelope.status).toBe(400);
    expect((await api.http('GET', `/v1/jobs/${id}`)).body.status).toBe('input_required');

    const ok = await api.http('POST', `/v1/jobs/${id}/input`, {
      body: { input: { approved: true, comment: 'go' } },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('working');
    const done = await status(id, 'completed');
    expect(done.body.result).toEqual({ approved: true, comment: 'go' });
    expect(
      (await api.http('POST', `/v1/jobs/${id}/input`, { body: { input: { approved: false } } }))
        .status,
    ).toBe(409);
  });

  it('answers 409 to input on a task that is not waiting for it', async () => {
    const id = await submit('sleep', { ms: 1500 });
    const res = await api.http('POST', `/v1/jobs/${id}/input`, { body: { input: {} } });
    expect(res.status).toBe(409);
    expect(res.body.taskStatus).toBe('working');
  });

  it('cancels a task waiting for input', async () => {
    const id = await submit('approval', { question: 'Q?' });
    await status(id, 'input_required');
    const res = await api.http('POST', `/v1/jobs/${id}/cancel`);
    expect(res.body.status).toBe('cancelled');
    expect(await api.tasks.queueFor('approval').getJob(id)).toBeUndefined();
    expect(
      (await api.http('POST', `/v1/jobs/${id}/input`, { body: { input: { approved: true } } }))
        .status,
    ).toBe(409);
  });

  it('holds no worker slot and survives a worker restart', async () => {
    const solo = await startInProcessApi();
    let w = await startWorker(solo.prefix, { LONGRUN_WORKER_CONCURRENCY: '1' });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push(
          (
            await solo.http('POST', '/v1/jobs', {
              body: { type: 'approval', input: { question: `q${i}` } },
            })
          ).body.taskId,
        );
      }
      for (const id of ids) {
        await waitFor(
          async () => (await solo.http('GET', `/v1/jobs/${id}`)).body.status === 'input_required',
        );
      }
      // Three parked approvals, one slot: an echo still runs.
      const echo = (await solo.http('POST', '/v1/jobs', { body: { type: 'echo', input: {} } })).body
        .taskId;
      await waitFor(
        async () => (await solo.http('GET', `/v1/jobs/${echo}`)).body.status === 'completed',
      );
      expect(await w.stop()).toBe(0);
      w = await startWorker(solo.prefix, { LONGRUN_WORKER_CONCURRENCY: '1' });
      await solo.http('POST', `/v1/jobs/${ids[1]}/input`, { body: { input: { approved: false } } });
      await waitFor(
        async () => (await solo.http('GET', `/v1/jobs/${ids[1]}`)).body.status === 'completed',
      );
      expect((await solo.http('GET', `/v1/jobs/${ids[1]}/result`)).body.result).toEqual({
        approved: false,
      });
      expect((await solo.http('GET', `/v1/jobs/${ids[0]}`)).body.status).toBe('input_required');
    } finally {
      await w.stop();
      await solo.close();
    }
  });
});

describe('forget and expiry', () => {
  it('DELETE answers 409 while working, 204 when terminal, then the task is gone', async () => {
    const running = await submit('sleep', { ms: 1500 });
    expect((await api.http('DELETE', `/v1/jobs/${running}`)).status).toBe(409);
    const id = await submit('echo', {});
    await status(id, 'completed');
    expect((await api.http('DELETE', `/v1/jobs/${id}`)).status).toBe(204);
    expect((await api.http('GET', `/v1/jobs/${id}`)).status).toBe(404);
    const list = await api.http('GET', '/v1/jobs?limit=100');
    expect(list.body.tasks.map((t: { taskId: string }) => t.taskId)).not.toContain(id);
  });

  it('a task is gone as soon as its ttl has passed', async () => {
    const res = await api.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: {}, ttlMs: 1000 },
    });
    const id = res.body.taskId;
    await status(id, 'completed');
    const expiresAt = Date.parse(res.body.createdAt) + 1000;
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 20));
    expect((await api.http('GET', `/v1/jobs/${id}`)).status).toBe(404);
    expect((await api.http('GET', `/v1/jobs/${id}/result`)).status).toBe(404);
  });
});

describe('metrics', () => {
  it('the worker exports job outcomes and durations; the API exports queue depth', async () => {
    const id = await submit('echo', { m: 1 });
    await status(id, 'completed');
    const port = worker.ready.metricsPort as number;
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/longrun_jobs_processed_total\{type="echo",outcome="completed"\} [1-9]/);
    expect(text).toMatch(/longrun_job_duration_seconds_count\{type="echo"\} [1-9]/);
    expect(text).toMatch(/^longrun_worker_active_jobs \d+$/m);

    // The gauge counts handlers running now (read at scrape time). An earlier test's sleep may
    // still be running (its task expired under it): wait for none, then run one.
    const scrape = async () =>
      (await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).match(
        /^longrun_worker_active_jobs (\d+)$/m,
      )?.[1];
    await expect.poll(scrape, { timeout: 5000, interval: 50 }).toBe('0');
    const sleeping = await submit('sleep', { ms: 1500 });
    await expect.poll(scrape, { timeout: 5000, interval: 50 }).toBe('1');
    await status(sleeping, 'completed');
    expect(await scrape()).toBe('0');
    expect(text).toMatch(/process_cpu_user_seconds_total/);
    const apiText = (await api.http('GET', '/metrics')).text;
    for (const state of [
      'waiting',
      'active',
      'delayed',
      'prioritized',
      'waiting-children',
      'completed',
      'failed',
    ]) {
      expect(apiText).toContain(`longrun_queue_jobs{queue="tasks",state="${state}",shard="0"}`);
    }
    expect(apiText).toMatch(
      /longrun_http_request_duration_seconds_count\{method="POST",route="\/v1\/jobs\/",status="202"\} [1-9]/,
    );
    expect(apiText).toContain('longrun_redis_up 1');
  });

  it("docs/operations.md lists every label of the API's metrics", async () => {
    const doc = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
    // The metrics table: | `name` | type | `label`, `label` | from | meaning |
    const documented = new Map<string, string[]>();
    for (const [, name, labels] of doc.matchAll(/^\| `(longrun_\w+)` +\| \w+ +\| ([^|]*)\|/gm)) {
      documented.set(
        name!,
        [...labels!.matchAll(/`(\w+)`/g)].map((m) => m[1]!),
      );
    }
    const apiText = (await api.http('GET', '/metrics')).text;
    const exported = new Map<string, Set<string>>();
    for (const [, series, labels = ''] of apiText.matchAll(
      /^(longrun_\w+?)(?:_bucket|_sum|_count)?\{([^}]*)\}/gm,
    )) {
      const names = [...labels.matchAll(/(\w+)="/g)].map((m) => m[1]!).filter((l) => l !== 'le');
      const known = exported.get(series!) ?? new Set<string>();
      for (const l of names) known.add(l);
      exported.set(series!, known);
    }
    expect(exported.get('longrun_queue_jobs')).toContain('shard');
    for (const [name, labels] of exported) {
      expect(documented.has(name), `${name} in the metrics table`).toBe(true);
      expect(documented.get(name)?.sort(), name).toEqual([...labels].sort());
    }
  });
});
