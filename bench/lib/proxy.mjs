// Figure 8: bullmq-proxy side by side. The BullMQ authors' HTTP proxy (on Bun), from a local
// checkout named by BENCH_BULLMQ_PROXY, against longrun's API on the pinned Bun and on this Node:
// same Redis, same connections, alternating rounds. longrun's submit against the proxy's add-job
// (`POST /queues/:queue/jobs`), its poll against the proxy's get-job (`GET
// /queues/:queue/jobs/:id`); req/s and CPU per request of the server process and of Redis. Then
// the Redis work of one request of each (commandstats deltas, and a MONITOR sample).
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort, start } from './children.mjs';
import { apiKey, auth, C, ECHO_INPUT, jsonAuth, root } from './config.mjs';
import { checkLoad, ctx, indexKey, loadWithCpu, poll, post, say, sum } from './context.mjs';
import { monitorSample, tripsText } from './monitor.mjs';
import { commandStats } from './redis.mjs';
import { markdownTable, median, num } from './report.mjs';
import { load, startApi } from './services.mjs';

/** The pinned Bun (scripts/install-runtimes.mjs): runs the proxy and longrun's API on Bun. */
export const BUN = join(root, 'tools/bun/node_modules/.bin/bun');
const QUEUE = 'echo';
/** The done criteria, longrun on Bun against the proxy in the same run. */
const GOALS = { submit: 0.6, poll: 0.8, cpu: 1.6 };
/** Requests whose Redis commands are counted, per operation. */
const WORK_N = 2000;

/** The checkout BENCH_BULLMQ_PROXY names, or why the part is skipped. */
export function proxyCheckout() {
  const given = process.env.BENCH_BULLMQ_PROXY;
  if (!given) return { skip: 'BENCH_BULLMQ_PROXY is not set' };
  const dir = resolve(given);
  if (!existsSync(join(dir, 'src/index.ts'))) return { skip: `no src/index.ts in ${dir}` };
  if (!existsSync(join(dir, 'node_modules/bullmq'))) {
    return { skip: `${dir} has no node_modules: run \`${BUN} install\` there` };
  }
  if (!existsSync(BUN)) return { skip: `no Bun at ${BUN} (npm ci installs it)` };
  return { dir };
}

/** `bun src/index.ts` of the checkout on a free port, its queues under `prefix`. */
async function startProxy(dir, prefix) {
  const port = await freePort();
  const redis = new URL(ctx.redisUrl);
  const child = await start('bullmq-proxy', BUN, [join(dir, 'src/index.ts')], {
    env: {
      PORT: String(port),
      REDIS_URL: '', // it would win over REDIS_HOST
      REDIS_HOST: redis.hostname,
      REDIS_PORT: redis.port || '6379',
      REDIS_USERNAME: decodeURIComponent(redis.username),
      REDIS_PASSWORD: decodeURIComponent(redis.password),
      AUTH_TOKENS: apiKey,
      QUEUE_PREFIX: prefix,
    },
    ready: 'Running BullMQ Proxy on port',
  });
  return { name: 'bullmq-proxy', child, port, base: `http://127.0.0.1:${port}`, prefix };
}

/** What one server is asked: its submit, its poll (over the ids in a file) and their answers. */
function proxySide(target) {
  const body = JSON.stringify([{ name: QUEUE, data: ECHO_INPUT }]);
  const path = `/queues/${QUEUE}/jobs`;
  return {
    key: 'proxy',
    label: 'bullmq-proxy',
    target,
    submit: (extra) => ({
      url: `${target.base}${path}`,
      method: 'POST',
      headers: jsonAuth,
      body,
      connections: C.connections,
      ...extra,
    }),
    poll: (file, extra) => ({
      url: `${target.base}${path}/x`,
      headers: auth,
      idsFile: file,
      pathTemplate: `${path}/{id}`,
      connections: C.connections,
      ...extra,
    }),
    status: { submit: '200', poll: '200' },
    ids: (n) => ctx.redis.lrange(`${target.prefix}:${QUEUE}:wait`, 0, n - 1),
  };
}

function longrunSide(key, label, target) {
  return {
    key,
    label,
    target,
    submit: (extra) => post(target, extra),
    poll: (file, extra) => poll(target, file, extra),
    status: { submit: '202', poll: '200' },
    ids: async (n) =>
      (await ctx.redis.zrandmember(indexKey(target.prefix), n)).map((m) => m.slice(14)),
  };
}

async function measure(side, what, options) {
  return checkLoad(
    `${side.label} ${what}`,
    await loadWithCpu(side.target, options),
    side.status[what],
  );
}

/**
 * Commands per request, each with its µs per call, from the commandstats delta of `n` requests,
 * and which were sent and which ran inside scripts, from a MONITOR sample of 200.
 */
async function redisWork(side, what, options, n = WORK_N) {
  const before = await commandStats(ctx.redis);
  const r = await loadWithCpu(side.target, { ...options, amount: n, connections: C.connections });
  const after = await commandStats(ctx.redis);
  checkLoad(`${side.label} ${what} (counted)`, r, side.status[what]);
  const commands = {};
  for (const [cmd, s] of Object.entries(after)) {
    const calls = s.calls - (before[cmd]?.calls ?? 0);
    if (calls > 0 && cmd !== 'info') {
      const usec = s.usec - (before[cmd]?.usec ?? 0);
      commands[cmd] = { perRequest: calls / r.total, usecPerCall: usec / calls };
    }
  }
  const trips = await monitorSample(200, () => load({ ...options, amount: 200 }));
  return {
    side: side.label,
    what,
    n: r.total,
    cpuUs: r.cpuUs,
    redisUs: r.redisUs,
    commands,
    trips,
  };
}

/** Runs the part; `prefixes.px` holds the proxy's queue, `.lb` / `.ln` longrun on Bun / Node. */
export async function proxyFigures({ dir, prefixes, apiKeys }) {
  const { redisUrl } = ctx;
  const bunVersion = execFileSync(BUN, ['--version'], { encoding: 'utf8' }).trim();
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
        cwd: dir,
        encoding: 'utf8',
      }).trim();
    } catch {
      return 'unknown';
    }
  })();
  const proxy = proxySide(await startProxy(dir, prefixes.px));
  const opts = (prefix, runtime) => ({ redisUrl, prefix, apiKeys, runtime });
  const onBun = await startApi('api-bun', opts(prefixes.lb, BUN));
  const onNode = await startApi('api-node', opts(prefixes.ln, process.execPath));
  const sides = [
    proxy,
    longrunSide('bun', `longrun on Bun ${bunVersion}`, onBun),
    longrunSide('node', `longrun on Node ${process.versions.node}`, onNode),
  ];
  say(
    `bullmq-proxy ${commit} :${proxy.target.port}, longrun on Bun :${onBun.port}, on Node :${onNode.port}`,
  );
  for (const side of sides) {
    // Warm-up, and the ids the polls draw from.
    checkLoad(
      `${side.label} seed`,
      await load(side.submit({ amount: C.small })),
      side.status.submit,
    );
    side.idsFile = join(ctx.tmp, `${side.key}.ids`);
    writeFileSync(side.idsFile, (await side.ids(C.small)).join('\n'));
    await load(side.poll(side.idsFile, { duration: 1 }));
    side.rounds = { submit: [], poll: [] };
  }
  for (let i = 0; i < C.rounds; i++) {
    // Each round starts with another server, so a drift in the machine's load favours none.
    const order = [...sides.slice(i % sides.length), ...sides.slice(0, i % sides.length)];
    for (const side of order) {
      side.rounds.submit.push(await measure(side, 'submit', side.submit({ duration: C.loadS })));
    }
    for (const side of order) {
      side.rounds.poll.push(
        await measure(side, 'poll', side.poll(side.idsFile, { duration: C.loadS })),
      );
    }
    const line = (what) => sides.map((s) => `${s.key} ${num(s.rounds[what][i].rps)}`).join(', ');
    say(`proxy round ${i + 1}: submit ${line('submit')} req/s; poll ${line('poll')} req/s`);
  }
  const bun = sides[1];
  const idem = { ...jsonAuth, 'idempotency-key': 'bench-[<id>]' };
  const work = [
    await redisWork(bun, 'submit', bun.submit()),
    await redisWork(bun, 'submit', { ...bun.submit(), headers: idem, idReplacement: true }),
    await redisWork(proxy, 'submit', proxy.submit()),
    await redisWork(bun, 'poll', bun.poll(bun.idsFile)),
    await redisWork(proxy, 'poll', proxy.poll(proxy.idsFile)),
  ];
  work[1].what = 'submit with Idempotency-Key';
  await Promise.all([proxy.target.child.stop(), onBun.child.stop(), onNode.child.stop()]);
  const result = {
    commit,
    bunVersion,
    settings: { connections: C.connections, loadS: C.loadS, rounds: C.rounds, workN: WORK_N },
    sides: sides.map(({ key, label, rounds }) => ({ key, label, ...rounds })),
    work,
  };
  for (const row of proxyRows(result)) say(`${row.name}: ${row.value}; ${row.ceiling}`);
  return result;
}

const med = (xs, f) => median(xs.map(f));
/** Median of the per-round ratios a ÷ b (each pair measured in the same round). */
const pairRatio = (as, bs, f) => median(as.map((a, i) => f(a) / f(bs[i])));
const both = (r) => r.cpuUs + r.redisUs;
const cpuText = (xs) =>
  `${num(med(xs, (r) => r.cpuUs))} µs + Redis ${num(med(xs, (r) => r.redisUs))}`;

/** The rows of the table: the three criteria (longrun on Bun) and, for information, on Node. */
export function proxyRows(p) {
  const [proxy, ...longruns] = p.sides;
  const conns = `${p.settings.connections} conns`;
  const rows = [];
  for (const lr of longruns) {
    const onBun = lr.key === 'bun';
    const rows1 = [
      ['submit', `submit ÷ proxy add-job, ${conns} (req/s)`, 'add', GOALS.submit],
      ['poll', `poll ÷ proxy get-job, ${conns} (req/s)`, 'get', GOALS.poll],
    ].map(([what, name, op, goal]) => {
      const r = pairRatio(lr[what], proxy[what], (x) => x.rps);
      return {
        key: `proxy.${lr.key}.${what}`,
        id: '8',
        name: `${lr.label}: ${name}`,
        value: num(med(lr[what], (x) => x.rps)),
        ceiling: `proxy ${op} ${num(med(proxy[what], (x) => x.rps))}`,
        ratio: r,
        goal: onBun ? `≥ ${goal.toFixed(2)}×` : 'info',
        pass: onBun ? r >= goal : null,
      };
    });
    const cpu = pairRatio(lr.submit, proxy.submit, both);
    const cpuPoll = pairRatio(lr.poll, proxy.poll, both);
    rows.push(...rows1, {
      key: `proxy.${lr.key}.cpu`,
      id: '8',
      name: `${lr.label}: CPU per submit, server + Redis (longrun ÷ proxy)`,
      value: cpuText(lr.submit),
      ceiling: `proxy ${cpuText(proxy.submit)}`,
      ratio: cpu,
      goal: onBun ? `≤ ${GOALS.cpu.toFixed(2)}×` : 'info',
      pass: onBun && Number.isFinite(cpu) ? cpu <= GOALS.cpu : null,
    });
    rows.push({
      key: `proxy.${lr.key}.cpuPoll`,
      id: '8',
      name: `${lr.label}: CPU per poll, server + Redis (longrun ÷ proxy)`,
      value: cpuText(lr.poll),
      ceiling: `proxy ${cpuText(proxy.poll)}`,
      ratio: cpuPoll,
      goal: 'info',
      pass: null,
    });
  }
  return rows;
}

const lat = (r) =>
  `${num(r.rps)} req/s · p99 ${r.latency.p99} ms · CPU ${num(r.cpuUs)} µs (Redis ${num(r.redisUs)})`;

/** The per-round figures and the Redis work per request, for docs/BENCHMARKS.md. */
export function proxyMarkdown(p) {
  const { connections, loadS, workN } = p.settings;
  const rounds = (what) =>
    markdownTable(
      ['round', ...p.sides.map((s) => s.label)],
      p.sides[0][what].map((_, i) => [String(i + 1), ...p.sides.map((s) => lat(s[what][i]))]),
    );
  const workRows = p.work.map((w) => {
    const cmds = Object.entries(w.commands).sort((a, b) => b[1].perRequest - a[1].perRequest);
    // The time of the commands clients sent (a script's including what it ran), per request: a
    // command also run inside scripts counts with the share MONITOR saw sent.
    const sentUs = sum(
      cmds.map(([c, s]) => {
        const [top, lua] = [w.trips.top[c] ?? 0, w.trips.lua[c] ?? 0];
        return top ? (s.perRequest * s.usecPerCall * top) / (top + lua) : 0;
      }),
    );
    return [
      `${w.side}: ${w.what}`,
      tripsText(w.trips),
      tripsText(w.trips, 'lua') || '–',
      cmds
        .map(([c, s]) => `${c} ${s.perRequest.toFixed(2)} × ${s.usecPerCall.toFixed(1)}`)
        .join(', '),
      `${num(sentUs, 1)} µs`,
      `${num(w.redisUs)} µs`,
    ];
  });
  return [
    `bullmq-proxy \`${p.commit}\` on Bun ${p.bunVersion}, adding \`[{"name":"${QUEUE}","data":<the echo input>}]\` (no job options) and getting jobs by id; longrun submitting and polling as in figures 1 and 2. ${connections} connections, ${loadS} s per run; in each round every server is measured in turn, the first one rotating. CPU: user + system time of the server process and of the private redis-server, per request.`,
    '',
    `Submit / add-job:\n\n${rounds('submit')}`,
    '',
    `Poll / get-job:\n\n${rounds('poll')}`,
    '',
    `Redis work per request (${num(workN)} requests each, ${connections} connections, \`INFO commandstats\` deltas; "sent" and "in scripts" from a MONITOR sample of 200). Commands as calls per request × µs per call; a script's µs include the commands it ran, which are also listed under their own names. Command time: the µs of the commands sent, per request; Redis CPU: the redis-server process's, per request (command time plus reading, parsing and answering).`,
    '',
    markdownTable(
      [
        'request',
        'sent',
        'in scripts',
        'commandstats: calls × µs per call',
        'command time',
        'Redis CPU',
      ],
      workRows,
    ),
  ].join('\n');
}
