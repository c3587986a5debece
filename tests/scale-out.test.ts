import { afterAll, describe, expect, inject, it } from 'vitest';
import { httpClient, waitFor } from './helpers/http.js';
import { startApp, type Proc } from './helpers/processes.js';
import {
  API_KEYS,
  KEY_A,
  startInProcessApi,
  startWorker,
  uniquePrefix,
  type InProcessApi,
} from './helpers/service.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
});
async function api(): Promise<InProcessApi> {
  const a = await startInProcessApi();
  cleanup.push(() => a.close());
  return a;
}
async function worker(prefix: string, env: Record<string, string> = {}): Promise<Proc> {
  const w = await startWorker(prefix, env);
  cleanup.push(() => w.stop());
  return w;
}
const statusOf = async (a: InProcessApi, id: string) =>
  (await a.http('GET', `/v1/jobs/${id}`)).body;

describe('queues per job type', () => {
  it('a worker started for some types leaves the others queued; their own worker drains them', async () => {
    const a = await api();
    const echoOnly = await worker(a.prefix, { LONGRUN_WORKER_TYPES: 'echo' });
    expect(echoOnly.ready.queues).toEqual(['tasks']);
    const sleep = (await a.http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 50 } } }))
      .body.taskId;
    const echo = (await a.http('POST', '/v1/jobs', { body: { type: 'echo', input: {} } })).body
      .taskId;
    await waitFor(async () => (await statusOf(a, echo)).status === 'completed');
    expect(await a.tasks.queueFor('sleep').getWaitingCount()).toBe(1);
    expect((await statusOf(a, sleep)).statusMessage).toBe('queued');
    const sleeper = await worker(a.prefix, { LONGRUN_WORKER_TYPES: 'sleep' });
    expect(sleeper.ready.queues).toEqual(['tasks-slow']);
    await waitFor(async () => (await statusOf(a, sleep)).status === 'completed');
    const metrics = (await a.http('GET', '/metrics')).text;
    expect(metrics).toContain('longrun_queue_jobs{queue="tasks-slow",state="waiting"} 0');
  });

  it('refuses to start a worker for an unknown type', async () => {
    await expect(startWorker(uniquePrefix(), { LONGRUN_WORKER_TYPES: 'nope' })).rejects.toThrow(
      /Unknown job type/,
    );
  });

  it('holds a per-type concurrency cap across worker processes', async () => {
    const a = await api();
    const env = { LONGRUN_TYPE_CONCURRENCY: 'sleep:2', LONGRUN_WORKER_CONCURRENCY: '4' };
    await worker(a.prefix, env);
    await worker(a.prefix, env);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(
        (await a.http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 700 } } })).body
          .taskId,
      );
    }
    const queue = a.tasks.queueFor('sleep');
    let most = 0;
    await waitFor(
      async () => {
        most = Math.max(most, await queue.getActiveCount());
        const statuses = await Promise.all(ids.map(async (id) => (await statusOf(a, id)).status));
        return statuses.every((s) => s === 'completed');
      },
      { timeoutMs: 20_000, intervalMs: 25, what: 'all sleeps to complete' },
    );
    expect(most).toBe(2); // reached, never exceeded, with 8 slots available in the fleet
  });
});

describe('four worker processes', () => {
  it('share one queue: every process takes jobs, every task completes once', async () => {
    const a = await api();
    const workers = await Promise.all(
      Array.from({ length: 4 }, () => worker(a.prefix, { LONGRUN_WORKER_CONCURRENCY: '4' })),
    );
    const ids: string[] = [];
    for (let i = 0; i < 80; i++) {
      ids.push(
        (await a.http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 50 } } })).body
          .taskId,
      );
    }
    await waitFor(
      async () => {
        const all = await Promise.all(ids.map((id) => statusOf(a, id)));
        return all.every((h) => h.status === 'completed');
      },
      { timeoutMs: 30_000, what: '80 tasks to complete' },
    );
    const processed = await Promise.all(
      workers.map(async (w) => {
        const text = await (
          await fetch(`http://127.0.0.1:${w.ready.metricsPort as number}/metrics`)
        ).text();
        return Number(
          /longrun_jobs_processed_total\{type="sleep",outcome="completed"\} (\d+)/.exec(
            text,
          )?.[1] ?? 0,
        );
      }),
    );
    expect(processed.every((n) => n > 0)).toBe(true); // work spread over all four processes
    expect(processed.reduce((x, y) => x + y, 0)).toBe(80); // and none ran twice
  });
});

describe('priorities', () => {
  it('runs a higher-priority task before earlier lower-priority ones', async () => {
    const a = await api();
    const low: string[] = [];
    for (let i = 0; i < 3; i++) {
      low.push(
        (await a.http('POST', '/v1/jobs', { body: { type: 'echo', input: { i }, priority: 10 } }))
          .body.taskId,
      );
    }
    const high = (
      await a.http('POST', '/v1/jobs', { body: { type: 'echo', input: {}, priority: 1 } })
    ).body.taskId;
    expect((await a.tasks.counts()).prioritized).toBe(4);
    await worker(a.prefix, { LONGRUN_WORKER_CONCURRENCY: '1', LONGRUN_WORKER_TYPES: 'echo' });
    const done = await waitFor(async () => {
      const all = await Promise.all([high, ...low].map((id) => statusOf(a, id)));
      return all.every((h) => h.status === 'completed') ? all : undefined;
    });
    const finished = (h: { lastUpdatedAt: string }) => Date.parse(h.lastUpdatedAt);
    expect(done.slice(1).every((h) => finished(h) >= finished(done[0]))).toBe(true);
    expect((await a.http('POST', '/v1/jobs', { body: { type: 'echo', priority: 0 } })).status).toBe(
      400,
    );
  });
});

describe('several API processes, no sticky sessions', () => {
  it('a task submitted through one is polled, answered and cancelled through the other', async () => {
    const prefix = uniquePrefix();
    const env = {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
      PORT: '0',
      HOST: '127.0.0.1',
    };
    const one = await startApp('api', env);
    const two = await startApp('api', env);
    cleanup.push(
      () => one.stop(),
      () => two.stop(),
    );
    await worker(prefix);
    const a = httpClient(`http://127.0.0.1:${one.ready.port as number}`, KEY_A);
    const b = httpClient(`http://127.0.0.1:${two.ready.port as number}`, KEY_A);

    const approval = (
      await a('POST', '/v1/jobs', { body: { type: 'approval', input: { question: 'q' } } })
    ).body.taskId;
    await waitFor(
      async () => (await b('GET', `/v1/jobs/${approval}`)).body.status === 'input_required',
    );
    expect(
      (await b('POST', `/v1/jobs/${approval}/input`, { body: { input: { approved: true } } }))
        .status,
    ).toBe(200);
    expect((await a('GET', `/v1/jobs/${approval}/result?wait=10`)).body.result).toEqual({
      approved: true,
    });

    const sleep = (await b('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 30_000 } } }))
      .body.taskId;
    await waitFor(
      async () => (await a('GET', `/v1/jobs/${sleep}`)).body.statusMessage === 'running',
    );
    expect((await a('POST', `/v1/jobs/${sleep}/cancel`)).body.status).toBe('cancelled');
    expect((await b('GET', `/v1/jobs/${sleep}`)).body.status).toBe('cancelled');
  });
});

describe('request ids', () => {
  it('echoes X-Request-Id and the worker logs it with the task', async () => {
    const a = await api();
    const w = await worker(a.prefix);
    const res = await a.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: {} },
      headers: { 'x-request-id': 'req-abc-123' },
    });
    expect(res.headers.get('x-request-id')).toBe('req-abc-123');
    const generated = await a.http('GET', '/v1/jobs');
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    await waitFor(
      async () =>
        w.lines.some(
          (l) =>
            l.includes('"task run ended"') &&
            l.includes('"requestId":"req-abc-123"') &&
            l.includes(res.body.taskId),
        ),
      {
        what: 'worker log line with the request id',
      },
    );
  });
});
