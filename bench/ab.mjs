// A/B of two API variants on the same machine, Redis and load, alternating round by round:
// submit and poll throughput and latency at 50 connections. A variant is the built API plus
// optional `node --import` preloads (see bench/experiments/), so an idea can be priced before the
// source changes, or the built API of another checkout (--a-root / --b-root: e.g. a
// `git worktree` of an older commit with its own `npm ci` and build), to price a change already
// made. Uses a private redis-server (or --redis-url) and fresh prefixes, removed after.
//
//   node bench/ab.mjs --b-import=bench/experiments/autopipeline.mjs [--a-import=…] [--rounds=3]
//                     [--duration=5]
//   git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npm run build)
//   node bench/ab.mjs --a-root=/tmp/before --rounds=5
//   node bench/ab.mjs --b-runtime=tools/bun/node_modules/.bin/bun   # the same API on Bun
//   node bench/ab.mjs --a-env=LONGRUN_FAIR_SHARE=off                # a setting's price
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cleanupAll, onCleanup } from './lib/children.mjs';
import { withCpu } from './lib/cpu.mjs';
import { connect, removePrefix, startPrivateRedis } from './lib/redis.mjs';
import { markdownTable, median, num, ratio } from './lib/report.mjs';
import { load, startApi } from './lib/services.mjs';

const { values: args } = parseArgs({
  options: {
    'a-import': { type: 'string', multiple: true, default: [] },
    'b-import': { type: 'string', multiple: true, default: [] },
    'a-root': { type: 'string' },
    'b-root': { type: 'string' },
    'a-runtime': { type: 'string' },
    'b-runtime': { type: 'string' },
    'a-env': { type: 'string', multiple: true, default: [] },
    'b-env': { type: 'string', multiple: true, default: [] },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    'redis-url': { type: 'string' },
  },
});
const rounds = Number(args.rounds);
const duration = Number(args.duration);
const body = JSON.stringify({
  type: 'echo',
  input: { message: 'hello from the benchmark', n: 42, tags: ['a', 'b'] },
});
const apiKey = `bench-${randomBytes(18).toString('base64url')}`;
const auth = { authorization: `Bearer ${apiKey}` };
/** `KEY=value` options as an environment. */
const envOf = (list) =>
  Object.fromEntries(list.map((kv) => [kv.split('=')[0], kv.slice(kv.indexOf('=') + 1)]));
const imports = (list) => list.flatMap((file) => ['--import', resolve(file)]);

async function main() {
  console.log(
    `${availableParallelism()} cores, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  const privateRedis = args['redis-url'] ? undefined : await startPrivateRedis();
  const redisUrl = args['redis-url'] ?? privateRedis.url;
  // The private redis-server's CPU is measured with each API's (a shared one's would mix in others').
  redisPid = privateRedis?.child.pid;
  const redis = connect(redisUrl);
  onCleanup(() => redis.quit());
  const id = `bench-ab-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  const variants = [
    {
      name: 'A',
      preload: args['a-import'],
      root: args['a-root'],
      runtime: args['a-runtime'],
      env: envOf(args['a-env']),
      prefix: `${id}-a`,
    },
    {
      name: 'B',
      preload: args['b-import'],
      root: args['b-root'],
      runtime: args['b-runtime'],
      env: envOf(args['b-env']),
      prefix: `${id}-b`,
    },
  ];
  onCleanup(async () => {
    for (const v of variants) await removePrefix(redis, v.prefix);
  });
  const tmp = mkdtempSync(join(tmpdir(), 'longrun-ab-'));
  onCleanup(async () => rmSync(tmp, { recursive: true, force: true }));
  for (const v of variants) {
    v.api = await startApi(`api-${v.name}`, {
      redisUrl,
      prefix: v.prefix,
      apiKeys: `bench:${apiKey}`,
      nodeArgs: imports(v.preload),
      checkout: v.root && resolve(v.root),
      env: v.env,
      ...(v.runtime ? { runtime: resolve(v.runtime) } : {}),
    });
    v.submit = [];
    v.poll = [];
    const what = v.preload.length ? v.preload.join(', ') : 'as is';
    const on = v.runtime ? ` on ${v.runtime}` : '';
    const env = Object.entries(v.env)
      .map(([k, val]) => ` ${k}=${val}`)
      .join('');
    console.log(`${v.name}: the built API of ${v.root ?? 'this checkout'}${on}, ${what}${env}`);
  }
  const post = (v, extra) => ({
    url: `${v.api.base}/v1/jobs`,
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body,
    connections: 50,
    ...extra,
  });
  for (const v of variants) {
    await load(post(v, { amount: 2000 }));
    const members = await redis.zrandmember(`${v.prefix}:tenant:bench:tasks`, 2000);
    v.ids = join(tmp, `${v.name}.ids`);
    writeFileSync(v.ids, members.map((m) => m.slice(14)).join('\n'));
  }
  const poll = (v) => ({
    url: `${v.api.base}/v1/jobs/x`,
    headers: auth,
    idsFile: v.ids,
    pathTemplate: '/v1/jobs/{id}',
    connections: 50,
    duration,
  });
  for (let i = 0; i < rounds; i++) {
    // Alternate which variant goes first, so a drift in the machine's load favours neither.
    const order = i % 2 === 0 ? variants : [...variants].reverse();
    for (const v of order) v.submit.push(await measure(v, post(v, { duration })));
    for (const v of order) v.poll.push(await measure(v, poll(v)));
    const [a, b] = variants;
    console.log(
      `round ${i + 1}: submit A ${num(a.submit[i].rps)} B ${num(b.submit[i].rps)} req/s, ${num(a.submit[i].cpuUs)} / ${num(b.submit[i].cpuUs)} µs CPU (Redis ${num(a.submit[i].redisUs)} / ${num(b.submit[i].redisUs)}); ` +
        `poll A ${num(a.poll[i].rps)} B ${num(b.poll[i].rps)} req/s, ${num(a.poll[i].cpuUs)} / ${num(b.poll[i].cpuUs)} µs CPU (Redis ${num(a.poll[i].redisUs)} / ${num(b.poll[i].redisUs)})`,
    );
  }
  const [a, b] = variants;
  const line = (what, key) => {
    const rps = (v) => median(v[key].map((r) => r.rps));
    const lat = (v, p) => median(v[key].map((r) => r.latency[p]));
    const cpu = (v) => median(v[key].map((r) => r.cpuUs));
    const redisCpu = (v) => median(v[key].map((r) => r.redisUs));
    const r = median(a[key].map((ra, i) => b[key][i].rps / ra.rps));
    const c = median(a[key].map((ra, i) => ra.cpuUs / b[key][i].cpuUs));
    const rc = median(a[key].map((ra, i) => ra.redisUs / b[key][i].redisUs));
    const redisPart = (v) => (redisPid ? ` + Redis ${num(redisCpu(v))}` : '');
    const cell = (v) =>
      `${num(rps(v))} req/s (p50 ${lat(v, 'p50')}, p99 ${lat(v, 'p99')} ms), ${num(cpu(v))}${redisPart(v)} µs CPU/req`;
    return [what, cell(a), cell(b), ratio(r), ratio(c), ...(redisPid ? [ratio(rc)] : [])];
  };
  console.log(
    `\n${markdownTable(
      [
        '50 connections',
        'A',
        'B',
        'B ÷ A req/s',
        'A ÷ B CPU per request',
        ...(redisPid ? ['A ÷ B Redis CPU'] : []),
      ],
      [line('submit', 'submit'), line('poll', 'poll')],
    )}\n(each a median over the rounds; CPU per request is the API process's user + system time, and the private redis-server's)`,
  );
  console.log(
    `\nload average at end ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
}

let redisPid;

/**
 * A load run with the CPU µs per request the variant's API process used and, on a private Redis,
 * the redis-server's.
 */
async function measure(v, options) {
  const pids = [v.api.child.pid, ...(redisPid ? [redisPid] : [])];
  const { result, cpu } = await withCpu(pids, () => load(options));
  result.cpuUs = (cpu[0] * 1e6) / (result.sent || result.total);
  result.redisUs = redisPid ? (cpu[1] * 1e6) / (result.sent || result.total) : NaN;
  // A variant that answers errors fast would look faster: every answer must be a 2xx.
  if (result.non2xx || result.errors) {
    throw new Error(`${v.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return result;
}

try {
  await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
