// Where a submit's Redis CPU goes (issue 28, round three): longrun's API (on Bun unless
// --runtime=node) against a private redis-server, the echo submit of figure 8 at 50 connections;
// per submit, the redis-server's CPU (/proc), the script's own time and each command's calls and
// µs (INFO commandstats deltas), and what Redis spent with no submit at all (the API idle, over
// as long as the load took). Alternates two built trees with --a-root=<checkout>.
//
//   node bench/experiments/submit-redis.mjs [--seed=40000] [--n=20000] [--rounds=2]
//     [--a-root=/work/main] [--runtime=node] [--commands] [--perf=<file>]
// --perf samples the redis-server with `perf record -g` during the first counted load (read it
// with `perf report -i <file> --no-children --sort dso,symbol`).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanupAll } from '../lib/children.mjs';
import { cpuSeconds } from '../lib/cpu.mjs';
import { commandStats, connect, startPrivateRedis } from '../lib/redis.mjs';
import { load, startApi } from '../lib/services.mjs';
import { BUN } from '../lib/proxy.mjs';
import { apiKey, jsonAuth, root, SUBMIT_BODY } from '../lib/config.mjs';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '40000' },
    n: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '2' },
    'a-root': { type: 'string' },
    runtime: { type: 'string', default: 'bun' },
    commands: { type: 'boolean', default: false },
    connections: { type: 'string', default: '50' },
    /** Samples redis-server with `perf record` during the first counted run, into this file. */
    perf: { type: 'string' },
  },
});
const N = Number(values.n);
const runtime = values.runtime === 'node' ? process.execPath : BUN;
const trees = values['a-root']
  ? [
      ['A', values['a-root']],
      ['B', root],
    ]
  : [['B', root]];

const submits = (api, amount) => ({
  url: `${api.base}/v1/jobs`,
  method: 'POST',
  headers: jsonAuth,
  body: SUBMIT_BODY,
  connections: Number(values.connections),
  amount,
});

const redisInfo = await startPrivateRedis();
const redis = connect(redisInfo.url);
const pid = redisInfo.child.pid;
const apiKeys = `bench:${apiKey}`;
const tmp = mkdtempSync(join(tmpdir(), 'submit-redis-'));
const results = [];
try {
  const apis = [];
  for (const [name, checkout] of trees) {
    const prefix = `sr-${name}-${randomBytes(3).toString('hex')}`;
    const api = await startApi(`api-${name}`, {
      redisUrl: redisInfo.url,
      prefix,
      apiKeys,
      runtime,
      checkout: checkout === root ? undefined : checkout,
    });
    // Seeded as far as figure 8's counted run is (its rounds store ~40 000 tasks first).
    for (let left = Number(values.seed); left > 0; left -= 10_000) {
      await load(submits(api, Math.min(left, 10_000)));
    }
    apis.push({ name, api });
  }
  // What Redis does with no request (timers of the APIs, their blocking reads): µs per second.
  const idle0 = cpuSeconds(pid);
  const idleStats0 = await commandStats(redis);
  await sleep(3000);
  const idlePerS = ((cpuSeconds(pid) - idle0) * 1e6) / 3;
  const idleStats = await commandStats(redis);
  const idleCalls = Object.entries(idleStats)
    .map(([c, s]) => [c, (s.calls - (idleStats0[c]?.calls ?? 0)) / 3])
    .filter(([c, n]) => n > 0 && c !== 'info');
  console.log(
    `idle: Redis ${idlePerS.toFixed(0)} µs CPU per second; calls/s ${idleCalls.map(([c, n]) => `${c} ${n.toFixed(1)}`).join(', ')}`,
  );
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const { name, api } of round % 2 ? [...apis].reverse() : apis) {
      const before = await commandStats(redis);
      const cpu0 = cpuSeconds(pid);
      const apiCpu0 = cpuSeconds(api.child.pid);
      const perf =
        values.perf && round === 0
          ? spawn('perf', ['record', '-F', '1999', '-g', '-p', String(pid), '-o', values.perf], {
              stdio: 'ignore',
            })
          : undefined;
      const t0 = Date.now();
      const r = await load(submits(api, N));
      if (perf) {
        perf.kill('SIGINT');
        await new Promise((done) => perf.once('exit', done));
      }
      const seconds = (Date.now() - t0) / 1000;
      const cpu = (cpuSeconds(pid) - cpu0) * 1e6;
      const apiCpu = (cpuSeconds(api.child.pid) - apiCpu0) * 1e6;
      const after = await commandStats(redis);
      const n = r.total;
      const d = {};
      for (const [cmd, s] of Object.entries(after)) {
        const calls = s.calls - (before[cmd]?.calls ?? 0);
        if (calls > 0 && cmd !== 'info') {
          d[cmd] = { calls: calls / n, us: (s.usec - (before[cmd]?.usec ?? 0)) / n };
        }
      }
      const script = (d.evalsha?.us ?? 0) + (d.eval?.us ?? 0);
      const calls = (d.evalsha?.calls ?? 0) + (d.eval?.calls ?? 0);
      const inner = Object.entries(d)
        .filter(([c]) => c !== 'evalsha' && c !== 'eval')
        .reduce((a, [, s]) => a + s.us, 0);
      const row = {
        tree: name,
        round,
        rps: n / seconds,
        cpu: cpu / n,
        api: apiCpu / n,
        idle: (idlePerS * seconds) / n,
        script,
        tasksPerCall: 1 / calls,
        commands: inner,
        lua: script - inner,
        outside: cpu / n - script,
        d,
      };
      results.push(row);
      console.log(
        `${name} round ${round + 1}: ${row.rps.toFixed(0)} submits/s; Redis CPU ${row.cpu.toFixed(1)} µs per submit (API ${row.api.toFixed(0)}): scripts ${script.toFixed(1)} (commands in them ${inner.toFixed(1)}, the rest ${row.lua.toFixed(1)}; ${row.tasksPerCall.toFixed(1)} submits a call), outside commands ${row.outside.toFixed(1)} (idle share ${row.idle.toFixed(1)})`,
      );
      if (values.commands) {
        console.log(
          `  ${Object.entries(d)
            .sort((a, b) => b[1].us - a[1].us)
            .map(([c, s]) => `${c} ${s.calls.toFixed(2)}× ${s.us.toFixed(1)}µs`)
            .join(', ')}`,
        );
      }
    }
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [name] of trees) {
    const rs = results.filter((r) => r.tree === name);
    console.log(
      `${name}: median Redis CPU ${med(rs.map((r) => r.cpu)).toFixed(1)} µs per submit, script ${med(rs.map((r) => r.script)).toFixed(1)}, API ${med(rs.map((r) => r.api)).toFixed(1)}`,
    );
  }
  writeFileSync(join(tmp, 'results.json'), JSON.stringify(results));
} finally {
  await redis.quit();
  await cleanupAll();
  rmSync(tmp, { recursive: true, force: true });
}
