// `npm run bench` (after `npm run build`): measures the built API and worker against the ceilings
// they sit on, side by side in one run, prints the table and writes docs/BENCHMARKS.md.
//
//   node bench/run.mjs [--quick] [--rounds=N] [--stored=N] [--skip-profile] [--redis-url=URL]
//                      [--save-baseline] [--json=FILE] [--no-docs] [--keep-profiles]
//   BENCH_BULLMQ_PROXY=/path/to/bullmq-proxy node bench/run.mjs [--only=proxy] [--quick]
//
// With BENCH_BULLMQ_PROXY naming a checkout of taskforcesh/bullmq-proxy (its dependencies
// installed with `tools/bun/node_modules/.bin/bun install`), figure 8 runs the proxy on the pinned
// Bun beside longrun's API on Bun and on Node; without it, that part is skipped. --only=proxy
// runs that part alone (no docs written).
//
// Every load generator and service is a separate process; traffic goes to 127.0.0.1 only. Redis
// is a private redis-server on a free port unless --redis-url (or BENCH_REDIS_URL) names one;
// either way the run uses fresh prefixes and UNLINKs their keys at the end.
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import { render } from './profile-summary.mjs';
import { cancelFigures } from './lib/cancel.mjs';
import { cleanupAll, onCleanup, run } from './lib/children.mjs';
import { apiKey, args, C, root } from './lib/config.mjs';
import { checkLoad, ctx, indexKey, poll, post, say, warn } from './lib/context.mjs';
import { figures } from './lib/figures.mjs';
import { pollRounds, scrapeRounds, submitRounds } from './lib/http-figures.mjs';
import { httpWorkerPart } from './lib/http-worker.mjs';
import { writeDocs } from './lib/markdown.mjs';
import { memoryFigures } from './lib/memory.mjs';
import { monitorSample, tripsText } from './lib/monitor.mjs';
import { processFigures } from './lib/processing.mjs';
import { profileApi } from './lib/profile-api.mjs';
import { proxyCheckout, proxyFigures, proxyMarkdown, proxyRows } from './lib/proxy.mjs';
import { connect, info, removePrefix, startPrivateRedis } from './lib/redis.mjs';
import { median, ms, num, textTable } from './lib/report.mjs';
import { latency, load, rawAdd, startApi, startBare } from './lib/services.mjs';

/** The built files measured: if another build replaces them mid-run, the run is not one build. */
const BUILT = [
  'apps/api/dist/main.js',
  'apps/worker/dist/main.js',
  'packages/engine/dist/task-store.js',
];
const builtStamp = () =>
  BUILT.map((f) => (existsSync(join(root, f)) ? statSync(join(root, f)).mtimeMs : 0)).join(',');

/** `<short commit>` of the tree, with " + uncommitted changes" when apps/ or packages/ differ. */
function describeTree() {
  try {
    const git = (...a) => execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim();
    const dirty = git('status', '--porcelain', '--', 'apps', 'packages') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' + uncommitted changes' : ''}`;
  } catch {
    return 'unknown (not a git work tree)';
  }
}

const env = {
  date: new Date().toISOString(),
  label: args.label ?? describeTree(),
  builtAt: builtStamp(),
  cores: availableParallelism(),
  cpu: cpus()[0]?.model ?? 'unknown',
  node: process.version,
  loadStart: loadavg(),
};
const loadText = (xs) => xs.map((x) => x.toFixed(2)).join(' ');

/** Starts the private Redis (or connects to the given one) and registers the key cleanup. */
async function setUpRedis() {
  const given = args['redis-url'] ?? process.env.BENCH_REDIS_URL;
  if (given) {
    ctx.redisUrl = given;
    env.redis = `existing (${given.replace(/\/\/[^@]*@/, '//…@')})`;
  } else {
    const own = await startPrivateRedis();
    ctx.redisUrl = own.url;
    ctx.redisPid = own.child.pid;
    env.redis = 'private redis-server, no persistence';
  }
  ctx.redis = connect(ctx.redisUrl);
  onCleanup(() => ctx.redis.quit());
  env.redisVersion = (await info(ctx.redis, 'server')).redis_version;
  const runId = `bench-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  const prefixes = { a: `${runId}-a`, b: `${runId}-b`, raw: `${runId}-raw`, prof: `${runId}-p` };
  // Figure 8: the proxy's queues, longrun on Bun, longrun on Node.
  Object.assign(prefixes, { px: `${runId}-px`, lb: `${runId}-lb`, ln: `${runId}-ln` });
  prefixes.hw = `${runId}-hw`; // figure 9: HTTP workers against the SDK worker
  onCleanup(async () => {
    let removed = 0;
    for (const prefix of Object.values(prefixes)) removed += await removePrefix(ctx.redis, prefix);
    say(`removed ${num(removed)} keys under ${runId}-*`);
  });
  say(`Redis ${env.redisVersion}: ${env.redis}; prefixes ${runId}-{${Object.keys(prefixes)}}`);
  return { prefixes, shared: Boolean(given) };
}

/** 4b: redis-benchmark SET on the same Redis. */
async function redisBenchmark(shared) {
  const port = new URL(ctx.redisUrl).port || '6379';
  const rates = [];
  for (let i = 0; i < C.rounds; i++) {
    const out = await run('redis-benchmark', 'redis-benchmark', [
      ...['-h', '127.0.0.1', '-p', port, '-t', 'set', '-n', String(C.setRequests), '-q'],
    ]);
    const match = /SET: ([\d.]+) requests per second/.exec(out);
    rates.push(match ? Number(match[1]) : NaN);
  }
  if (shared) await ctx.redis.del('key:__rand_int__'); // the one key redis-benchmark SET writes
  say(`redis-benchmark SET: ${rates.map((r) => num(r)).join(', ')} req/s`);
  return rates;
}

/** Writes `n` random task ids of a prefix to a file, for the poll load. */
async function idsFile(prefix, n, name) {
  const members = await ctx.redis.zrandmember(indexKey(prefix), n);
  const file = join(ctx.tmp, name);
  writeFileSync(file, members.map((m) => m.slice(14)).join('\n'));
  return file;
}

/** Submits through `api` until its prefix holds C.big tasks, or fewer if that would take too long. */
async function seedBig(api, prefix, submitRps) {
  const have = await ctx.redis.zcard(indexKey(prefix));
  let target = C.big;
  const estimate = Math.max(0, target - have) / submitRps;
  if (!args.stored && estimate > C.seedBudgetS) {
    target = Math.max(C.bigFallback, have);
    warn(
      `storing ${num(C.big)} tasks would take ~${num(estimate)} s at ${num(submitRps)} submits/s (budget ${C.seedBudgetS} s): measuring with ${num(target)} instead`,
    );
  }
  if (target > have) {
    const t0 = performance.now();
    // autocannon refuses more connections than requests (a few short of the target is common).
    const amount = target - have;
    const seed = await load(post(api, { amount, connections: Math.min(100, amount) }));
    checkLoad('seed', seed, '202');
    say(`seeded ${num(target - have)} tasks in ${num((performance.now() - t0) / 1000, 1)} s`);
  }
  return ctx.redis.zcard(indexKey(prefix));
}

async function main() {
  say(
    `longrun benchmark of ${env.label}${C.quick ? ' (--quick: short runs, to try the script only)' : ''}`,
  );
  say(`${env.cores} cores (${env.cpu}), load average ${loadText(env.loadStart)}`);
  const { prefixes, shared } = await setUpRedis();
  ctx.tmp = mkdtempSync(join(tmpdir(), 'longrun-bench-'));
  onCleanup(async () => rmSync(ctx.tmp, { recursive: true, force: true }));
  const d = {};
  d.setRates = await redisBenchmark(shared);

  const apiKeys = `bench:${apiKey}`;
  const redisUrl = ctx.redisUrl;
  const bare = await startBare();
  const api = await startApi('api', { redisUrl, prefix: prefixes.a, apiKeys });
  const api2 = await startApi('api2', { redisUrl, prefix: prefixes.b, apiKeys });
  say(`bare app :${bare.port}, api :${api.port} (prefix a), api2 :${api2.port} (prefix b)`);

  // 5, context: scrape before anything is stored.
  d.scrapeAtStart = await latency({ url: `${api.base}/metrics`, duration: C.scrapeS });
  say(`scrape, 0 tasks stored (api at start): p50 ${ms(d.scrapeAtStart.p50)}`);

  // 1 000 tasks, and warm-up of both servers on both routes.
  checkLoad('seed 1 000', await load(post(api, { amount: C.small })), '202');
  const smallIds = await idsFile(prefixes.a, C.small, 'small.ids');
  await load(post(bare, { duration: 1 }));
  await load(poll(bare, smallIds, { duration: 1 }));
  await load(poll(api, smallIds, { duration: 1 }));
  d.storedSmall = await ctx.redis.zcard(indexKey(prefixes.a));
  say(`${num(d.storedSmall)} tasks stored under prefix a; warmed up`);

  // Exact commands per request (MONITOR, untimed).
  const n = C.monitorSample;
  d.trips = {};
  d.trips.poll = await monitorSample(n, () =>
    load(poll(api, smallIds, { amount: n, connections: 10 })),
  );
  d.trips.submit = await monitorSample(n, () => load(post(api, { amount: n, connections: 10 })));
  d.trips.scrape = await monitorSample(20, () =>
    load({ url: `${api.base}/metrics`, amount: 20, connections: 1 }),
  );
  say(
    `commands per request: submit ${tripsText(d.trips.submit)}; poll ${tripsText(d.trips.poll)}; scrape ${tripsText(d.trips.scrape)}`,
  );

  // 2 and 1.
  d.pollSmall = await pollRounds(api, bare, smallIds, `poll, ${num(d.storedSmall)} stored`);
  d.submit = await submitRounds(api, bare);

  // 4a: raw queue.add, 100 in flight.
  d.rawAdds = [];
  const rawadd = { redisUrl, prefix: prefixes.raw, queue: 'rawadd' };
  for (let i = 0; i < C.rounds; i++) {
    const r = await rawAdd(rawadd, { count: C.rawAdds, inflight: 100, data: { tenant: 'bench' } });
    d.rawAdds.push(r.rate);
  }
  const rawaddQueue = new Queue('rawadd', { connection: ctx.redis, prefix: prefixes.raw });
  await rawaddQueue.obliterate({ force: true });
  say(`raw queue.add: ${d.rawAdds.map((r) => num(r)).join(', ')} adds/s`);

  // 2 with many tasks stored, then 5.
  d.storedBig = await seedBig(api, prefixes.a, median(d.submit.api.map((r) => r.rps)));
  say(`${num(d.storedBig)} tasks stored under prefix a`);
  const bigIds = await idsFile(prefixes.a, 2000, 'big.ids');
  d.pollBig = await pollRounds(api, bare, bigIds, `poll, ${num(d.storedBig)} stored`);
  d.scrape = await scrapeRounds(api, api2, d.storedBig);

  // 3, 6, 7 on prefix b (api2).
  const proc = await processFigures({
    api: api2,
    prefix: prefixes.b,
    rawPrefix: prefixes.raw,
    trips: d.trips,
  });
  d.processRuns = proc.runs;
  d.memory = await memoryFigures({
    api: api2,
    worker: proc.infoWorker,
    prefix: prefixes.b,
    rawPrefix: prefixes.raw,
    tasksQ: proc.tasksQ,
    rawQ: proc.rawQ,
  });
  const m = d.memory;
  say(
    `memory: longrun ${num(m.longrun.perTask)} B/task (record ${num(m.longrun.taskHash)}, events ${num(m.longrun.eventsStream)}, index ${num(m.longrun.indexEntry)}); raw BullMQ ${num(m.raw.perJob)} B/job (hash ${num(m.raw.jobHash)}, completed entry ${num(m.raw.completedEntry)})`,
  );
  d.cancel = await cancelFigures(api2, proc.infoWorker);
  say(
    `cancel: answer p99 ${ms(d.cancel.answer.p99)}, handler aborted p99 ${ms(d.cancel.aborted.p99)} (${d.cancel.n} cancels)`,
  );
  await Promise.all(
    [proc.rawWorker, proc.infoWorker.child, api.child, api2.child, bare.child].map((c) => c.stop()),
  );
  await Promise.all([proc.tasksQ.close(), proc.rawQ.close(), rawaddQueue.close()]);
  d.proxy = await proxyPart(prefixes, apiKeys);
  const hw = { redisUrl, redisPid: ctx.redisPid, prefix: prefixes.hw, quick: C.quick, say, warn };
  d.httpWorker = await httpWorkerPart({ ...hw, rounds: C.rounds });

  let profiles = null;
  if (!args['skip-profile']) {
    // A failed profile costs the profile section, not the figures measured so far.
    profiles = await profileApi({
      prefix: prefixes.prof,
      apiKeys,
      keep: args['keep-profiles'],
    }).catch((error) => {
      warn(`profiling failed: ${error instanceof Error ? error.message.split('\n')[0] : error}`);
      return null;
    });
  }
  if (builtStamp() !== env.builtAt) {
    warn('the built files (dist/) changed during the run: parts of it measured another build');
  }
  env.loadEnd = loadavg();
  env.seconds = (Date.now() - ctx.started) / 1000;
  report(
    d,
    profiles && {
      submit: profiles.submit.summary,
      poll: profiles.poll.summary,
      submitRps: profiles.submit.rps,
      pollRps: profiles.poll.rps,
    },
  );
}

/** Figure 8 when BENCH_BULLMQ_PROXY names a checkout, else a line saying why not. */
async function proxyPart(prefixes, apiKeys) {
  const checkout = proxyCheckout();
  if (checkout.dir) return proxyFigures({ dir: checkout.dir, prefixes, apiKeys });
  say(`bullmq-proxy side by side skipped: ${checkout.skip}`);
  return undefined;
}

/** `--only=proxy`: figure 8 alone, printed (and saved with --json); docs are not written. */
async function proxyOnly() {
  if (args.only !== 'proxy') throw new Error(`--only=${args.only}: only "proxy" is known`);
  if (!proxyCheckout().dir) return proxyPart();
  say(`longrun benchmark of ${env.label}, figure 8 only: bullmq-proxy side by side`);
  say(`${env.cores} cores (${env.cpu}), load average ${loadText(env.loadStart)}`);
  const { prefixes } = await setUpRedis();
  ctx.tmp = mkdtempSync(join(tmpdir(), 'longrun-bench-'));
  onCleanup(async () => rmSync(ctx.tmp, { recursive: true, force: true }));
  const proxy = await proxyPart(prefixes, `bench:${apiKey}`);
  if (builtStamp() !== env.builtAt) {
    warn('the built files (dist/) changed during the run: parts of it measured another build');
  }
  env.loadEnd = loadavg();
  env.seconds = (Date.now() - ctx.started) / 1000;
  const rows = proxyRows(proxy);
  const summaryText = [
    `bullmq-proxy side by side, longrun ${env.label}, ${env.date}`,
    `${env.cores} cores (${env.cpu}), Node ${env.node}, Redis ${env.redisVersion} (${env.redis})`,
    `load average at start ${loadText(env.loadStart)}, at end ${loadText(env.loadEnd)}; ${num(env.seconds)} s`,
    '',
    textTable(rows),
    ...(ctx.warnings.length ? ['', 'warnings:', ...ctx.warnings.map((w) => `  - ${w}`)] : []),
  ].join('\n');
  console.log(`\n${summaryText}\n\n${proxyMarkdown(proxy)}\n`);
  if (args.json) {
    const result = { env, rows, details: { proxy }, warnings: ctx.warnings, summaryText };
    writeFileSync(args.json, `${JSON.stringify(result, null, 2)}\n`);
  }
}

function report(details, profiles) {
  const rows = figures(details);
  const { warnings } = ctx;
  const summaryText = [
    `longrun benchmark of ${env.label}, ${env.date}`,
    `${env.cores} cores (${env.cpu}), Node ${env.node}, Redis ${env.redisVersion} (${env.redis})`,
    `load average at start ${loadText(env.loadStart)}, at end ${loadText(env.loadEnd)}; ${num(env.seconds)} s`,
    '',
    textTable(rows),
    ...(warnings.length ? ['', 'warnings:', ...warnings.map((w) => `  - ${w}`)] : []),
  ].join('\n');
  console.log(`\n${summaryText}\n`);
  if (profiles) {
    console.log(`${render(profiles.submit, 'submit profile (API process)')}\n`);
    console.log(`${render(profiles.poll, 'poll profile (API process)')}\n`);
  }
  const result = { env, rows, details, warnings, profiles, config: C, summaryText };
  if (args.json) writeFileSync(args.json, `${JSON.stringify(result, null, 2)}\n`);
  if (args['save-baseline']) {
    const file = join(root, 'bench/baseline.json');
    writeFileSync(file, `${JSON.stringify({ env, rows }, null, 2)}\n`);
    say('saved bench/baseline.json');
  }
  if (!args['no-docs']) writeDocs(result);
}

try {
  await (args.only ? proxyOnly() : main());
  await cleanupAll();
  say('done');
} catch (error) {
  console.error(`\nbenchmark failed: ${error instanceof Error ? error.stack : String(error)}`);
  await cleanupAll();
  process.exitCode = 1;
}
