// Durable tasks (issue 29): what a step costs in Redis round trips, and how long a parent waiting
// on 1 000 children takes against the children alone. A private redis-server, the built API and
// one worker process (concurrency 16), the stock `durable` and `echo` types; loopback only.
//
//   node bench/durable.mjs [--tasks=300] [--steps=5] [--children=1000] [--rounds=3]
//
// Step cost: `tasks` durable tasks of `steps` quiet steps against as many with none; the
// difference of Redis script calls (round trips) and of commands run (INFO commandstats, a
// script's own commands included, the benchmark's polls left out) per step.
// Fan-in: `children` echo tasks submitted in batches of 100, until all completed, against one
// durable task whose handler makes them with `ctx.runTasks`, until the parent completed.
// Step at 10 and at 1 000 (issue 40): `record-step` called straight (`DurableStore`) on
// `--cost-tasks` records of 1 010 steps each; Redis's own time per call (INFO commandstats'
// evalsha usec, nothing else running then) and the round trip, steps 1-20, 91-110, 991-1 010.
// SSE bytes: what one subscriber of `GET /v1/jobs/{id}/events?lastEventId=0` receives for a task
// of 1 000 steps (999 quiet steps and `last`: LONGRUN_MAX_STEPS's default), goal at most 2 MiB.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { cleanupAll, onCleanup } from './lib/children.mjs';
import { apiKey } from './lib/config.mjs';
import { DurableStore, taskKeys } from '@longrun/engine/internal';
import { callDelta, commandCalls, commandStats, connect, startPrivateRedis } from './lib/redis.mjs';
import { markdownTable, median } from './lib/report.mjs';
import { startApi, startWorker } from './lib/services.mjs';

const { values: args } = parseArgs({
  options: {
    tasks: { type: 'string', default: '300' },
    steps: { type: 'string', default: '5' },
    children: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    'cost-tasks': { type: 'string', default: '20' },
  },
});
const TASKS = Number(args.tasks);
const STEPS = Number(args.steps);
const CHILDREN = Number(args.children);
const ROUNDS = Number(args.rounds);
const COST_TASKS = Number(args['cost-tasks']);
const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };

process.on('SIGINT', () => void cleanupAll().then(() => process.exit(130)));

async function post(base, path, body) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Submits in batches of 100; the ids in order. */
async function submitAll(base, tasks) {
  const ids = [];
  for (let i = 0; i < tasks.length; i += 100) {
    const { results } = await post(base, '/v1/jobs/batch', { tasks: tasks.slice(i, i + 100) });
    for (const r of results) {
      if (r.status !== 202) throw new Error(`batch item: ${JSON.stringify(r)}`);
      ids.push(r.task.taskId);
    }
  }
  return ids;
}

/** Polls the records (HGET, left out of the counts) until every task is completed. */
async function allCompleted(redis, prefix, ids) {
  let pending = ids;
  while (pending.length > 0) {
    const pipe = redis.pipeline();
    for (const id of pending) pipe.hget(`${prefix}:task:${id}`, 'status');
    const statuses = (await pipe.exec()).map(([, s]) => s);
    const failed = statuses.find((s) => s === 'failed' || s === 'cancelled');
    if (failed) throw new Error(`a task ${failed}`);
    pending = pending.filter((_, i) => statuses[i] !== 'completed');
    if (pending.length > 0) await new Promise((r) => setTimeout(r, 20));
  }
}

const scripts = (delta) => (delta.evalsha ?? 0) + (delta.eval ?? 0);
const total = (delta) =>
  Object.entries(delta)
    .filter(([cmd]) => cmd !== 'hget' && cmd !== 'info')
    .reduce((sum, [, n]) => sum + n, 0);

/**
 * Records 1 010 steps on each of `tasks` fresh records with `record-step`; Redis microseconds
 * and round-trip ms per call over steps 1-20 ("at 10") and 991-1 010 ("at 1 000").
 */
async function stepCost(redis, prefix, tasks) {
  const keys = taskKeys(`${prefix}-cost`);
  const store = new DurableStore(redis, keys);
  // Step 100 too: the tail holds 50 entries from step 50 on, so 100 and 1 000 should match.
  const windows = { 10: [1, 20], 100: [91, 110], 1000: [991, 1010] };
  const sums = Object.fromEntries(
    Object.keys(windows).map((w) => [w, { usec: 0, ms: 0, calls: 0 }]),
  );
  for (let t = 0; t < tasks; t++) {
    const id = randomUUID();
    const now = String(Date.now());
    await redis.hset(keys.task(id), { status: 'working', tenant: 'bench', msg: '', seq: '1' });
    await redis.hset(keys.task(id), { updated: now, created: now, ttl: '3600000' });
    let before = null;
    let started = 0;
    for (let n = 1; n <= 1010; n++) {
      const at = Object.keys(windows).find((w) => windows[w][0] === n);
      if (at) [before, started] = [await commandStats(redis), performance.now()];
      const value = JSON.stringify({ step: n, at: Date.now() });
      const outcome = await store.recordStep(id, { name: `s${n}`, value, message: `step s${n}` });
      if (outcome.kind !== 'ok') throw new Error(`step ${n}: ${outcome.kind}`);
      const done = Object.keys(windows).find((w) => windows[w][1] === n);
      if (done) {
        const ms = performance.now() - started;
        const after = await commandStats(redis);
        const sum = sums[done];
        sum.usec += after.evalsha.usec - (before.evalsha?.usec ?? 0);
        sum.calls += after.evalsha.calls - (before.evalsha?.calls ?? 0);
        sum.ms += ms;
      }
    }
    await redis.del(keys.task(id));
  }
  const per = (w) => ({ usec: sums[w].usec / sums[w].calls, ms: sums[w].ms / sums[w].calls });
  return { at10: per(10), at100: per(100), at1000: per(1000) };
}

/** The bytes one SSE subscriber receives for a task of 1 000 steps, from its first event. */
async function sseBytes(base, redis, prefix) {
  const [id] = await submitAll(base, [{ type: 'durable', input: { steps: 999, quiet: true } }]);
  await allCompleted(redis, prefix, [id]);
  const res = await fetch(`${base}/v1/jobs/${id}/events?lastEventId=0`, { headers });
  let bytes = 0;
  for await (const chunk of res.body) bytes += chunk.length;
  const handle = await (await fetch(`${base}/v1/jobs/${id}`, { headers })).text();
  return { bytes, handleBytes: Buffer.byteLength(handle) };
}

async function main() {
  const redisServer = await startPrivateRedis();
  const redis = connect(redisServer.url);
  onCleanup(() => redis.quit());
  const prefix = `bench-durable-${Date.now()}`;
  const api = await startApi('api', {
    redisUrl: redisServer.url,
    prefix,
    apiKeys: `bench:${apiKey}`,
    env: { LONGRUN_DEFAULT_TTL_MS: '3600000' },
  });
  await startWorker('worker', {
    redisUrl: redisServer.url,
    prefix,
    logLevel: 'info',
    concurrency: 16,
  });

  // Warm-up: every script loaded, every queue made.
  await allCompleted(
    redis,
    prefix,
    await submitAll(api.base, [
      { type: 'durable', input: { steps: 1, quiet: true } },
      { type: 'durable', input: { children: 2 } },
      { type: 'echo', input: {} },
    ]),
  );

  const perStep = { scripts: [], calls: [] };
  const fanIn = { alone: [], parent: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const measure = async (steps) => {
      const before = await commandCalls(redis);
      const body = { type: 'durable', input: { steps, quiet: true } };
      await allCompleted(redis, prefix, await submitAll(api.base, Array(TASKS).fill(body)));
      return callDelta(before, await commandCalls(redis));
    };
    const none = await measure(0);
    const some = await measure(STEPS);
    perStep.scripts.push((scripts(some) - scripts(none)) / (TASKS * STEPS));
    perStep.calls.push((total(some) - total(none)) / (TASKS * STEPS));

    let t = performance.now();
    const echoes = Array.from({ length: CHILDREN }, (_, i) => ({
      type: 'echo',
      input: { child: i },
    }));
    await allCompleted(redis, prefix, await submitAll(api.base, echoes));
    fanIn.alone.push(performance.now() - t);
    t = performance.now();
    const [parent] = await submitAll(api.base, [
      { type: 'durable', input: { children: CHILDREN } },
    ]);
    await allCompleted(redis, prefix, [parent]);
    fanIn.parent.push(performance.now() - t);
    console.log(
      `round ${round}: ${perStep.scripts.at(-1).toFixed(2)} scripts and ${perStep.calls.at(-1).toFixed(2)} calls per step; ` +
        `${CHILDREN} echo tasks ${fanIn.alone.at(-1).toFixed(0)} ms, a parent of ${CHILDREN} children ${fanIn.parent.at(-1).toFixed(0)} ms`,
    );
  }
  const cost = await stepCost(redis, prefix, COST_TASKS);
  const sse = await sseBytes(api.base, redis, prefix);
  console.log(
    `record-step: ${cost.at10.usec.toFixed(1)} µs of Redis (${cost.at10.ms.toFixed(3)} ms round trip) at step 10, ` +
      `${cost.at1000.usec.toFixed(1)} µs (${cost.at1000.ms.toFixed(3)} ms) at step 1 000; ` +
      `SSE of a 1 000-step task: ${sse.bytes} bytes, its handle ${sse.handleBytes} bytes`,
  );
  const ms = (xs) => `${median(xs).toFixed(0)} ms`;
  console.log(
    markdownTable(
      ['measure', 'median', 'rounds'],
      [
        [
          'Redis script calls per step',
          median(perStep.scripts).toFixed(2),
          perStep.scripts.map((x) => x.toFixed(2)).join(', '),
        ],
        [
          "Redis commands per step (the script's own included)",
          median(perStep.calls).toFixed(2),
          perStep.calls.map((x) => x.toFixed(2)).join(', '),
        ],
        [
          `${CHILDREN} echo tasks alone`,
          ms(fanIn.alone),
          fanIn.alone.map((x) => x.toFixed(0)).join(', '),
        ],
        [
          `a parent of ${CHILDREN} children`,
          ms(fanIn.parent),
          fanIn.parent.map((x) => x.toFixed(0)).join(', '),
        ],
        ['parent / alone', (median(fanIn.parent) / median(fanIn.alone)).toFixed(2), ''],
        ['Redis µs per record-step at step 10', cost.at10.usec.toFixed(1), ''],
        ['Redis µs per record-step at step 100', cost.at100.usec.toFixed(1), ''],
        ['Redis µs per record-step at step 1 000', cost.at1000.usec.toFixed(1), ''],
        [
          'round trip ms per record-step at 10 / 1 000',
          `${cost.at10.ms.toFixed(3)} / ${cost.at1000.ms.toFixed(3)}`,
          '',
        ],
        ['bytes one SSE subscriber gets, 1 000-step task', String(sse.bytes), '≤ 2 MiB'],
        ['bytes of its handle (newest 50 steps)', String(sse.handleBytes), ''],
      ],
    ),
  );
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => cleanupAll());
