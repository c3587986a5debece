// Figure 3's comparison alone: raw BullMQ's worker against longrun's stock worker draining the
// same number of echo jobs, alternating round by round on one private redis-server, and the
// median of the per-round ratios (longrun ÷ the raw round just before it). With --a-root, a
// second longrun tree (e.g. /work/main) runs its worker in each round too, so before and after
// are compared against the same raw rounds. Per variant: jobs/s, worker and Redis CPU per job,
// Redis commands per job (INFO commandstats deltas, script-internal commands included) and the
// Redis time per job by command; then a MONITOR sample of top-level commands (round trips) per job.
//
//   node bench/worker-ratio.mjs [--rounds=5] [--jobs=8000] [--a-root=/work/main]
//                               [--worker-env=KEY=VALUE ...] [--api-env=KEY=VALUE ...] [--no-monitor]
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { cleanupAll, onCleanup, start, waitFor } from './lib/children.mjs';
import { ECHO_INPUT, apiKey, root } from './lib/config.mjs';
import { ctx, post } from './lib/context.mjs';
import { withCpu } from './lib/cpu.mjs';
import { monitorSample, tripsText } from './lib/monitor.mjs';
import { drained } from './lib/processing.mjs';
import { commandStats, connect, removePrefix, startPrivateRedis } from './lib/redis.mjs';
import { load, longrunEnv, rawAdd, startApi } from './lib/services.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    jobs: { type: 'string', default: '8000' },
    'a-root': { type: 'string' },
    'worker-env': { type: 'string', multiple: true, default: [] },
    // KEY=VALUE settings of the APIs that submit (e.g. LONGRUN_FAIR_SHARE=off: standard jobs).
    'api-env': { type: 'string', multiple: true, default: [] },
    'no-monitor': { type: 'boolean', default: false },
    // Directory: every worker runs under --cpu-prof, its profile in <dir>/<variant>/.
    profile: { type: 'string' },
    // Counts each worker's young (Scavenge) and full (Mark-Compact) collections per job.
    gc: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const jobs = Number(values.jobs);
const envOf = (list) =>
  Object.fromEntries(
    list.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const profArgs = (name) => [
  ...(values.profile ? ['--cpu-prof', '--cpu-prof-dir', join(resolve(values.profile), name)] : []),
  ...(values.gc ? ['--trace-gc'] : []),
];
/** Counts a child's GC lines (with --gc) in `counter`. */
const watchGc = (child, counter) =>
  child.on((line) => {
    if (line.includes('Scavenge')) counter.young += 1;
    else if (line.includes('Mark-Compact')) counter.full += 1;
  });
const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

async function statsDelta(before) {
  const after = await commandStats(ctx.redis);
  const out = {};
  for (const [cmd, s] of Object.entries(after)) {
    if (cmd === 'info') continue;
    const b = before[cmd] ?? { calls: 0, usec: 0 };
    if (s.calls > b.calls) out[cmd] = { calls: s.calls - b.calls, usec: s.usec - b.usec };
  }
  return out;
}

try {
  const own = await startPrivateRedis();
  ctx.redisUrl = own.url;
  ctx.redis = connect(own.url);
  onCleanup(() => ctx.redis.quit());
  const stamp = Date.now().toString(36);
  const extraEnv = envOf(values['worker-env']);

  // One prefix (and one API, to submit) per longrun variant, so their workers never share a queue.
  const variants = [];
  const trees = values['a-root']
    ? [
        ['A', resolve(values['a-root'])],
        ['B', root],
      ]
    : [['B', root]];
  for (const [label, tree] of trees) {
    const prefix = `bench-wr${label}-${stamp}`;
    onCleanup(() => removePrefix(ctx.redis, prefix));
    const api = await startApi(`api-${label}`, {
      redisUrl: own.url,
      prefix,
      apiKeys: `bench:${apiKey}`,
      env: envOf(values['api-env']),
    });
    const queue = new Queue('tasks.echo', { connection: ctx.redis, prefix });
    const worker = await start(
      `worker-${label}`,
      process.execPath,
      [...profArgs(label), join(tree, 'apps/worker/dist/main.js')],
      {
        env: {
          ...longrunEnv(own.url, prefix),
          LOG_LEVEL: 'warn',
          LONGRUN_WORKER_CONCURRENCY: '100',
          LONGRUN_METRICS_PORT: '0',
          LONGRUN_METRICS_HOST: '127.0.0.1',
          ...extraEnv,
        },
      },
    );
    const gc = { young: 0, full: 0 };
    watchGc(worker, gc);
    await waitFor(async () => (await queue.getWorkersCount()) >= 1, { intervalMs: 50 });
    variants.push({ label, tree, api, queue, pid: worker.pid, gc, runs: [] });
    onCleanup(() => worker.stop('SIGTERM', 20_000));
  }
  const rawPrefix = `bench-wrraw-${stamp}`;
  onCleanup(() => removePrefix(ctx.redis, rawPrefix));
  const raw = { redisUrl: own.url, prefix: rawPrefix, queue: 'raw' };
  const rawQ = new Queue('raw', { connection: ctx.redis, prefix: rawPrefix });
  const rawWorker = await start(
    'raw-worker',
    process.execPath,
    [...profArgs('raw'), join(root, 'bench/raw-worker.mjs')],
    {
      env: {
        REDIS_URL: own.url,
        BENCH_PREFIX: rawPrefix,
        BENCH_QUEUE: 'raw',
        BENCH_CONCURRENCY: '100',
        NODE_ENV: 'production',
      },
      ready: '"msg":"raw worker ready"',
    },
  );
  const rawGc = { young: 0, full: 0 };
  watchGc(rawWorker, rawGc);
  const rawRuns = [];

  const measure = async (pid, queue, n, gc) => {
    const before = await commandStats(ctx.redis);
    const gc0 = { ...gc };
    const t0 = performance.now();
    const { cpu } = await withCpu([pid, own.child.pid], async () => {
      await queue.resume();
      await drained(queue);
    });
    const seconds = (performance.now() - t0) / 1000;
    const stats = await statsDelta(before);
    return {
      young: (gc.young - gc0.young) / n,
      full: (gc.full - gc0.full) / n,
      rate: n / seconds,
      workerUs: (cpu[0] * 1e6) / n,
      redisUs: (cpu[1] * 1e6) / n,
      stats,
      n,
    };
  };
  const rawRound = async (n) => {
    await rawQ.pause();
    await rawAdd(raw, { count: n, inflight: 100, data: ECHO_INPUT });
    return measure(rawWorker.pid, rawQ, n, rawGc);
  };
  const longrunRound = async (v, n) => {
    await v.queue.pause();
    const r = await load(post(v.api, { amount: n }));
    return measure(v.pid, v.queue, r.total, v.gc);
  };

  // Warm-up (JIT, script loads), left out as figure 3 does.
  await rawRound(jobs / 4);
  for (const v of variants) await longrunRound(v, jobs / 4);
  for (let i = 0; i < rounds; i++) {
    // Alternate which longrun tree goes first, the raw round always just before them.
    const r = await rawRound(jobs);
    rawRuns.push(r);
    const order = i % 2 ? [...variants].reverse() : variants;
    const line = [`round ${i + 1}: raw ${fmt(r.rate)} jobs/s`];
    for (const v of order) {
      const x = await longrunRound(v, jobs);
      x.ratio = x.rate / r.rate;
      v.runs.push(x);
      line.push(
        `${v.label} ${fmt(x.rate)} (${fmt(x.ratio, 2)}x, worker ${fmt(x.workerUs)} us, Redis ${fmt(x.redisUs)} us)`,
      );
    }
    console.log(`${line.join('; ')}; raw worker ${fmt(r.workerUs)} us, Redis ${fmt(r.redisUs)} us`);
  }

  const summary = (name, runs, ratio = true) => {
    const per = (f) => median(runs.map(f));
    const cmds = {};
    for (const x of runs) {
      for (const [cmd, s] of Object.entries(x.stats)) {
        cmds[cmd] ??= { calls: 0, usec: 0, n: 0 };
        cmds[cmd].calls += s.calls;
        cmds[cmd].usec += s.usec;
      }
    }
    const total = runs.reduce((a, x) => a + x.n, 0);
    const calls = Object.values(cmds).reduce((a, c) => a + c.calls, 0);
    const top = Object.entries(cmds)
      .sort((a, b) => b[1].usec - a[1].usec)
      .slice(0, 12)
      .map(([cmd, c]) => `${cmd} ${(c.calls / total).toFixed(2)}/${(c.usec / total).toFixed(1)}us`);
    console.log(
      `${name}: median ${fmt(per((x) => x.rate))} jobs/s${
        ratio
          ? `, ratio ${fmt(
              per((x) => x.ratio),
              3,
            )} (rounds ${runs.map((x) => fmt(x.ratio, 2)).join(' ')})`
          : ''
      }; CPU per job worker ${fmt(per((x) => x.workerUs))} us, Redis ${fmt(per((x) => x.redisUs))} us;${
        values.gc
          ? ` GCs per 1000 jobs: young ${fmt(
              per((x) => x.young * 1000),
              1,
            )}, full ${fmt(
              per((x) => x.full * 1000),
              2,
            )};`
          : ''
      } commands per job ${(calls / total).toFixed(2)}: ${top.join(', ')}`,
    );
  };
  summary('raw', rawRuns, false);
  for (const v of variants) summary(`longrun ${v.label} (${v.tree})`, v.runs);

  if (!values['no-monitor']) {
    const sample = 200;
    for (const v of variants) {
      await v.queue.pause();
      await load(post(v.api, { amount: sample, connections: 10 }));
      const m = await monitorSample(sample, async () => {
        await v.queue.resume();
        await drained(v.queue);
      });
      console.log(
        `round trips per job, longrun ${v.label}: ${tripsText(m)}; in scripts: ${tripsText(m, 'lua')}`,
      );
    }
    await rawQ.pause();
    await rawAdd(raw, { count: sample, inflight: 100, data: ECHO_INPUT });
    const m = await monitorSample(sample, async () => {
      await rawQ.resume();
      await drained(rawQ);
    });
    console.log(`round trips per job, raw: ${tripsText(m)}; in scripts: ${tripsText(m, 'lua')}`);
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
