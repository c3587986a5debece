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
  oneShard,
} from './helpers/service.js';

// This file counts one shard's queues and a worker's exact parallelism.
oneShard();

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
    // Its type's own queue, and the shared one older versions placed jobs on.
    expect(echoOnly.ready.queues).toEqual(['tasks.echo', 'tasks']);
    const sleep = (await a.http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 50 } } }))
      .body.taskId;
    const echo = (await a.http('POST', '/v1/jobs', { body: { type: 'echo', input: {} } })).body
      .taskId;
    await waitFor(async () => (await statusOf(a, echo)).status === 'completed');
    // Waiting: in BullMQ's prioritized set under fair share (the default).
    expect(await a.tasks.queueFor('sleep').getJobCountByTypes('waiting', 'prioritized')).toBe(1);
    expect((await statusOf(a, sleep)).statusMessage).toBe('queued');
    const sleeper = await worker(a.prefix, { LONGRUN_WORKER_TYPES: 'sleep' });
    expect(sleeper.ready.queues).toEqual(['tasks-slow', 'tasks']);
    await waitFor(async () => (await statusOf(a, sleep)).status === 'completed');
    const metrics = (await a.http('GET', '/metrics')).text;
    expect(metrics).toContain('longrun_queue_jobs{queue="tasks-slow",state="waiting",shard="0"} 0');
    expect(metrics).toContain(
      'longrun_queue_jobs{queue="tasks-slow",state="prioritized",shard="0"} 0',
    );
  });

  it('refuses to start a worker for an unknown type', async () => {
    await expect(startWorker(uniquePrefix(), { LONGRUN_WORKER_TYPES: 'nope' })).rejects.toThrow(
      /unknown job type nope/,
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

/** The messages of a run's last log line (`task completed`, `task failed`, `task run ended`). */
const RUN_END = /"msg":"task (completed|failed|run ended)"/;

/** One handler run, from a worker's line for the run's end (pino `time` is when it ended). */
interface Run {
  taskId: string;
  outcome: string;
  start: number;
  end: number;
}
function runsOf(w: Proc): Run[] {
  return w.lines
    .filter((l) => RUN_END.test(l))
    .map((l) => {
      const { taskId, outcome, durationMs, time } = JSON.parse(l) as {
        taskId: string;
        outcome: string;
        durationMs: number;
        time: number;
      };
      return { taskId, outcome, start: time - durationMs, end: time };
    });
}
/** Most runs in progress at one instant (one ending at t and one starting at t do not overlap). */
function peakOverlap(runs: Run[]): number {
  const edges = runs.flatMap((r): [number, number][] => [
    [r.start, 1],
    [r.end, -1],
  ]);
  edges.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let now = 0;
  let most = 0;
  for (const [, delta] of edges) most = Math.max(most, (now += delta));
  return most;
}

describe('throughput with worker processes', () => {
  // I/O-bound jobs (sleep): a process waits, it does not compute, so the cluster's throughput is
  // bounded by its parallelism (processes × concurrency) and rises with every process added, even
  // on 2 cores. CPU-bound jobs stop scaling at the machine's cores, and past that at Redis
  // (docs/operations.md, Scaling). Timing goals belong in `npm run bench`: this asserts the shape
  // with wide margins, and the cause (how many jobs ran at once) exactly.
  it('I/O-bound jobs: 1 → 2 → 4 processes raise throughput, as parallelism rises', async () => {
    const concurrency = 2;
    const batch = 48; // ≥ 6 waves of processes × concurrency even with 4 processes
    const jobMs = 250;
    const results: {
      processes: number;
      jobsPerSec: number;
      seconds: number;
      peakActive: number;
      perProcess: number[];
    }[] = [];
    for (const processes of [1, 2, 4]) {
      const a = await api();
      const queue = a.tasks.queueFor('sleep');
      await queue.pause(); // the batch waits until every process is up
      const workers = await Promise.all(
        Array.from({ length: processes }, () =>
          worker(a.prefix, {
            LONGRUN_WORKER_CONCURRENCY: String(concurrency),
            LONGRUN_WORKER_TYPES: 'sleep',
          }),
        ),
      );
      const ids: string[] = [];
      for (let i = 0; i < batch; i++) {
        const res = await a.http('POST', '/v1/jobs', {
          body: { type: 'sleep', input: { ms: jobMs } },
        });
        expect(res.status).toBe(202);
        ids.push(res.body.taskId);
      }
      expect(await queue.getActiveCount()).toBe(0);
      expect(workers.flatMap(runsOf)).toEqual([]);

      const started = Date.now();
      await queue.resume();
      let sampledActive = 0;
      await waitFor(
        async () => {
          sampledActive = Math.max(sampledActive, await queue.getActiveCount());
          return workers.flatMap(runsOf).length >= batch;
        },
        { timeoutMs: 60_000, intervalMs: 20, what: `${batch} runs on ${processes} processes` },
      );
      const perWorker = workers.map(runsOf);
      const runs = perWorker.flat();
      const seconds = (Math.max(...runs.map((r) => r.end)) - started) / 1000;

      // Every task ran exactly once, and completed.
      expect(runs.map((r) => r.taskId).sort()).toEqual([...ids].sort());
      expect(runs.every((r) => r.outcome === 'completed')).toBe(true);
      const statuses = await Promise.all(ids.map(async (id) => (await statusOf(a, id)).status));
      expect(statuses.every((s) => s === 'completed')).toBe(true);
      // Why throughput rises: every process took part with all its slots busy at once, so the
      // fleet ran processes × concurrency jobs at the same time (Redis' active count agrees), and
      // never more.
      expect(perWorker.map(peakOverlap)).toEqual(workers.map(() => concurrency));
      expect(peakOverlap(runs)).toBe(processes * concurrency);
      expect(sampledActive).toBe(processes * concurrency);
      // ... and that parallelism bounds it: no faster than ⌈batch / slots⌉ waves of jobMs.
      const waves = Math.ceil(batch / (processes * concurrency));
      expect(seconds).toBeGreaterThanOrEqual((waves * jobMs) / 1000 - 0.05);

      results.push({
        processes,
        jobsPerSec: Math.round((batch / seconds) * 10) / 10,
        seconds,
        peakActive: sampledActive,
        perProcess: perWorker.map((r) => r.length),
      });
      expect(await Promise.all(workers.map((w) => w.stop()))).toEqual(workers.map(() => 0));
      await a.close();
    }
    const [one, two, four] = results.map((r) => r.jobsPerSec) as [number, number, number];
    console.log(
      JSON.stringify({
        test: 'scale-out throughput (sleep jobs)',
        jobMs,
        concurrency,
        batch,
        results,
        ratio2to1: Math.round((two / one) * 100) / 100,
        ratio4to2: Math.round((four / two) * 100) / 100,
      }),
    );
    // Ideal is 2× per doubling; wide margins for a loaded 2-core machine.
    expect(two).toBeGreaterThanOrEqual(1.4 * one);
    expect(four).toBeGreaterThanOrEqual(1.4 * two);
  }, 120_000);
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
            l.includes('"task completed"') &&
            l.includes('"requestId":"req-abc-123"') &&
            l.includes(res.body.taskId),
        ),
      {
        what: 'worker log line with the request id',
      },
    );
  });

  it('at the default level, a run that failed is logged with its request id', async () => {
    const a = await api();
    const w = await worker(a.prefix);
    const res = await a.http('POST', '/v1/jobs', {
      body: { type: 'fail', input: { message: 'no' } },
      headers: { 'x-request-id': 'req-fail-9' },
    });
    expect(res.status, res.text).toBe(202);
    await waitFor(
      async () =>
        w.lines.some(
          (l) =>
            l.includes('"task failed"') &&
            l.includes('"outcome":"failed"') &&
            l.includes('"requestId":"req-fail-9"') &&
            l.includes(res.body.taskId),
        ),
      { what: 'an info line for the failed run' },
    );
  });
});
