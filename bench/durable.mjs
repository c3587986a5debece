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
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { cleanupAll, onCleanup } from './lib/children.mjs';
import { apiKey } from './lib/config.mjs';
import { callDelta, commandCalls, connect, startPrivateRedis } from './lib/redis.mjs';
import { markdownTable, median } from './lib/report.mjs';
import { startApi, startWorker } from './lib/services.mjs';

const { values: args } = parseArgs({
  options: {
    tasks: { type: 'string', default: '300' },
    steps: { type: 'string', default: '5' },
    children: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
  },
});
const TASKS = Number(args.tasks);
const STEPS = Number(args.steps);
const CHILDREN = Number(args.children);
const ROUNDS = Number(args.rounds);
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
