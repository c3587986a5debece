import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardOfTaskId } from '@longrun/engine/internal';
import {
  primaryWork,
  startCluster,
  type LocalCluster,
  type PrimaryWork,
} from './helpers/cluster.js';
import { httpClient, waitFor } from './helpers/http.js';
import { startApp, type Proc } from './helpers/processes.js';
import { API_KEYS, KEY_A, KEY_B } from './helpers/service.js';
import { readSse } from './helpers/sse.js';

/**
 * Issue 15's "done means": the task space over 12 shards on a 3-primary Redis Cluster, the task
 * contract intact there, and the primaries sharing the commands (`INFO stats` deltas).
 */
const SHARDS = 12;
const procs: Proc[] = [];
let cluster: LocalCluster;
let api: Proc;
let apiUrl: string;
let http: ReturnType<typeof httpClient>;
let other: ReturnType<typeof httpClient>;

beforeAll(async () => {
  cluster = await startCluster(3);
  const env = {
    LONGRUN_REDIS_CLUSTER_NODES: cluster.nodes,
    LONGRUN_PREFIX: '{lrtest}',
    LONGRUN_SHARDS: String(SHARDS),
    LONGRUN_API_KEYS: API_KEYS,
    LONGRUN_POLL_INTERVAL_MS: '500',
    // On, so its counters' commands count too, but high enough never to refuse.
    LONGRUN_RATE_LIMIT_RPS: '100000',
    PORT: '0',
    HOST: '127.0.0.1',
  };
  api = await startApp('api', env);
  procs.push(api);
  // A fleet split by shard: each worker serves half of them.
  for (const shards of ['0-5', '6-11']) {
    procs.push(
      await startApp('worker', {
        ...env,
        LONGRUN_METRICS_PORT: '0',
        LONGRUN_WORKER_SHARDS: shards,
        LONGRUN_WORKER_CONCURRENCY: '24',
      }),
    );
  }
  apiUrl = `http://127.0.0.1:${api.ready.port as number}`;
  http = httpClient(apiUrl, KEY_A);
  other = httpClient(apiUrl, KEY_B);
}, 90_000);

afterAll(async () => {
  for (const p of procs) await p.stop();
  await cluster?.stop();
});

/** Runs `task` over `items`, `width` at a time. */
async function pool<T, R>(items: T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await task(items[i] as T);
      }
    }),
  );
  return out;
}

describe(`on a 3-primary Redis Cluster with ${SHARDS} shards`, () => {
  it('the API logs how the shards fall on the primaries: 4 each', () => {
    const line = api.lines.find((l) => l.includes('shards over the primaries'));
    expect(line, api.lines.join('\n')).toBeDefined();
    const placed = JSON.parse(line as string).shardsPerPrimary as Record<string, number>;
    expect(Object.keys(placed).sort()).toEqual([...cluster.addresses].sort());
    expect(Object.values(placed)).toEqual([4, 4, 4]);
  });

  it('each worker serves the shards it was given', () => {
    expect(procs[1]?.ready.shards).toEqual([0, 1, 2, 3, 4, 5]);
    expect(procs[2]?.ready.shards).toEqual([6, 7, 8, 9, 10, 11]);
  });

  it('keeps the submit contract: 202, Location, Retry-After and the handle', async () => {
    const res = await http('POST', '/v1/jobs', { body: { type: 'echo', input: { n: 1 } } });
    expect(res.status, res.text).toBe(202);
    expect(res.headers.get('location')).toBe(`/v1/jobs/${res.body.taskId}`);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 86_400_000 });
    const done = await http('GET', `/v1/jobs/${res.body.taskId}/result?wait=15`);
    expect(done.body).toMatchObject({ status: 'completed', result: { n: 1 } });
    // Another tenant's task is a missing one, on every route.
    for (const [method, path] of [
      ['GET', ''],
      ['GET', '/result'],
      ['POST', '/cancel'],
      ['DELETE', ''],
    ] as const) {
      expect((await other(method, `/v1/jobs/${res.body.taskId}${path}`)).status).toBe(404);
    }
  });

  it('places tasks over every shard, and a replayed idempotency key finds its task', async () => {
    const ids = await pool(
      Array.from({ length: 48 }, (_, i) => i),
      8,
      async (n) => {
        const r = await http('POST', '/v1/jobs', { body: { type: 'echo', input: { n } } });
        return r.body.taskId as string;
      },
    );
    expect(new Set(ids.map(shardOfTaskId)).size).toBe(SHARDS);
    for (let i = 0; i < 20; i++) {
      const key = `replay-${i}`;
      const body = { type: 'echo', input: { i } };
      const first = await http('POST', '/v1/jobs', { body, headers: { 'idempotency-key': key } });
      const again = await http('POST', '/v1/jobs', { body, headers: { 'idempotency-key': key } });
      expect(again.body.taskId).toBe(first.body.taskId);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
  });

  it('lists newest first across shards, paging with a cursor without gaps or repeats', async () => {
    const lister = httpClient(apiUrl, KEY_B);
    const made: string[] = [];
    for (let i = 0; i < 30; i++) {
      made.push(
        (await lister('POST', '/v1/jobs', { body: { type: 'echo', input: { i } } })).body.taskId,
      );
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await lister('GET', `/v1/jobs?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status, page.text).toBe(200);
      seen.push(...page.body.tasks.map((t: { taskId: string }) => t.taskId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...made].reverse());
  });

  it('cancels, answers, streams and forgets on whichever shard the task is', async () => {
    const sleep = (
      await http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 30_000 } } })
    ).body.taskId;
    expect((await http('POST', `/v1/jobs/${sleep}/cancel`)).body.status).toBe('cancelled');
    const approval = (
      await http('POST', '/v1/jobs', { body: { type: 'approval', input: { question: 'q' } } })
    ).body.taskId;
    await waitFor(
      async () => (await http('GET', `/v1/jobs/${approval}`)).body.status === 'input_required',
    );
    const answered = await http('POST', `/v1/jobs/${approval}/input`, {
      body: { input: { approved: true } },
    });
    expect(answered.status, answered.text).toBe(200);
    expect((await http('GET', `/v1/jobs/${approval}/result?wait=15`)).body.result).toEqual({
      approved: true,
    });
    const streamed = (
      await http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 800 } } })
    ).body.taskId;
    const sse = await readSse(`${apiUrl}/v1/jobs/${streamed}/events`, { key: KEY_A });
    expect(JSON.parse(sse.events.at(-1)!.data).status).toBe('completed');
    expect((await http('DELETE', `/v1/jobs/${approval}`)).status).toBe(204);
    expect((await http('GET', `/v1/jobs/${approval}`)).status).toBe(404);
    const batch = await http('POST', '/v1/jobs/batch', {
      body: { tasks: Array.from({ length: 10 }, (_, i) => ({ type: 'echo', input: { i } })) },
    });
    expect(batch.status, batch.text).toBe(207);
    const placed = batch.body.results.map((r: { task: { taskId: string } }) =>
      shardOfTaskId(r.task.taskId),
    );
    expect(new Set(placed).size).toBeGreaterThan(1);
  });

  it('shares thousands of tasks over the primaries (INFO stats per primary)', async () => {
    // What the idle fleet costs (workers' blocking reads, heartbeats, reconcilers), to tell it
    // apart from the tasks' own work below.
    const idleFrom = await primaryWork(cluster.ports);
    await new Promise((r) => setTimeout(r, 3000));
    const idleTo = await primaryWork(cluster.ports);
    const idlePerMs = idleTo.map((w, i) => ({
      commands: (w.commands - (idleFrom[i] as PrimaryWork).commands) / 3000,
      cpu: (w.cpuSeconds - (idleFrom[i] as PrimaryWork).cpuSeconds) / 3000,
    }));
    const before = await primaryWork(cluster.ports);
    const started = Date.now();
    const kinds = [
      ...Array.from({ length: 2400 }, (_, n) => ({ kind: 'echo', n })),
      ...Array.from({ length: 300 }, (_, n) => ({ kind: 'approval', n })),
      ...Array.from({ length: 300 }, (_, n) => ({ kind: 'cancel', n })),
    ];
    const body = (k: { kind: string; n: number }) =>
      k.kind === 'echo'
        ? { type: 'echo', input: { n: k.n } }
        : k.kind === 'approval'
          ? { type: 'approval', input: { question: `q${k.n}` } }
          : { type: 'sleep', input: { ms: 60_000 } };
    const tasks = await pool(kinds, 32, async (k) => {
      const r = await http('POST', '/v1/jobs', { body: body(k) });
      expect(r.status, r.text).toBe(202);
      // Polled once on the way.
      expect((await http('GET', `/v1/jobs/${r.body.taskId}`)).status).toBe(200);
      return { ...k, id: r.body.taskId as string };
    });
    await pool(
      tasks.filter((t) => t.kind === 'cancel'),
      16,
      async (t) => {
        const r = await http('POST', `/v1/jobs/${t.id}/cancel`);
        expect(r.body.status, r.text).toBe('cancelled');
      },
    );
    await pool(
      tasks.filter((t) => t.kind === 'approval'),
      16,
      async (t) => {
        await waitFor(
          async () => (await http('GET', `/v1/jobs/${t.id}`)).body.status === 'input_required',
          {
            timeoutMs: 60_000,
            intervalMs: 200,
          },
        );
        const r = await http('POST', `/v1/jobs/${t.id}/input`, {
          body: { input: { approved: true } },
        });
        expect(r.status, r.text).toBe(200);
      },
    );
    const outcomes = await pool(tasks, 32, async (t) => {
      // A long poll answers 409 while the task works: ask again until it has finished.
      for (;;) {
        const r = await http('GET', `/v1/jobs/${t.id}/result?wait=30`);
        if (r.status !== 409) return r.body.status as string;
      }
    });
    const elapsed = Date.now() - started;
    const want = tasks.map((t) => (t.kind === 'cancel' ? 'cancelled' : 'completed'));
    expect(outcomes).toEqual(want);
    const after = await primaryWork(cluster.ports);
    const delta = after.map((w, i) => w.commands - (before[i] as PrimaryWork).commands);
    const cpu = after.map((w, i) => w.cpuSeconds - (before[i] as PrimaryWork).cpuSeconds);
    const total = delta.reduce((a, b) => a + b, 0);
    const shares = delta.map((d) => d / total);
    const cpuPerTask = (cpu.reduce((a, b) => a + b, 0) * 1e6) / tasks.length;
    const idleCommands = idlePerMs.reduce((n, p) => n + p.commands, 0) * elapsed;
    const idleCpu = idlePerMs.reduce((n, p) => n + p.cpu, 0) * elapsed;
    const taskCpu = ((cpu.reduce((a, b) => a + b, 0) - idleCpu) * 1e6) / tasks.length;
    // Reported for docs/BENCHMARKS.md ("Shards on a Redis Cluster").
    console.log(
      `shards-cluster: ${tasks.length} tasks in ${elapsed} ms; commands per primary ${delta.join(' / ')} = ${shares.map((s) => `${(s * 100).toFixed(1)}%`).join(' / ')}; Redis CPU ${cpu.map((c) => `${c.toFixed(2)} s`).join(' / ')}, ${cpuPerTask.toFixed(0)} µs per task in all (${(total / tasks.length).toFixed(1)} commands), ${taskCpu.toFixed(0)} µs and ${((total - idleCommands) / tasks.length).toFixed(1)} commands per task less the idle fleet's`,
    );
    for (const share of shares) expect(share).toBeLessThanOrEqual(0.5);
    for (const share of shares) expect(share).toBeGreaterThan(0.15);
  }, 240_000);

  it('exports queue depth per shard', async () => {
    const metrics = (await http('GET', '/metrics')).text;
    for (let shard = 0; shard < SHARDS; shard++) {
      expect(metrics).toContain(
        `longrun_queue_jobs{queue="tasks.echo",state="waiting",shard="${shard}"}`,
      );
    }
  });
});
