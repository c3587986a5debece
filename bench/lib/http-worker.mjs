// Issue 31's figure: one HTTP worker process (examples/python-worker/worker.py, WORKER_MAX=10)
// drains queued jobs against one SDK worker (the stock worker, concurrency 10) on the same
// machine, alternating; and the API's CPU with `idle` long polls held open. Used by
// bench/run.mjs (figure 9 of `npm run bench`) and bench/http-worker.mjs (standalone).
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { start } from './children.mjs';
import { cpuSeconds } from './cpu.mjs';
import { median, num } from './report.mjs';
import { startApi, startWorker } from './services.mjs';

const PY_TYPE = 'py-wordcount';

/** Why the figure cannot be measured here (no python3), or null. */
export function httpWorkerSkip() {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return null;
  } catch {
    return 'python3 is not on PATH';
  }
}

/** Queues `n` tasks of `type` through the batch route, 100 a request, 8 requests at a time. */
async function fill(api, apiKey, type, input, n) {
  const batches = [];
  for (let i = 0; i < n; i += 100) batches.push(Math.min(100, n - i));
  const send = async (count) => {
    const res = await fetch(`${api.base}/v1/jobs/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tasks: Array.from({ length: count }, () => ({ type, input })) }),
    });
    if (res.status !== 207) throw new Error(`batch submit: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  for (let i = 0; i < batches.length; i += 8) await Promise.all(batches.slice(i, i + 8).map(send));
}

/**
 * Completions counted by `read` from the first to the `n`th: jobs/s over that span, and the CPU
 * each of `pids` (by name; a missing pid is skipped) used per job meanwhile (microseconds).
 */
async function drainRate(read, n, pids) {
  const known = Object.entries(pids).filter(([, pid]) => pid);
  let first;
  let firstCount = 0;
  let cpuBefore;
  for (;;) {
    const count = read();
    const now = performance.now();
    if (first === undefined && count > 0) {
      [first, firstCount] = [now, count];
      cpuBefore = Object.fromEntries(known.map(([k, pid]) => [k, cpuSeconds(pid)]));
    }
    if (count >= n) {
      const jobs = count - firstCount;
      const cpuUsPerJob = Object.fromEntries(
        known.map(([k, pid]) => [k, Math.round(((cpuSeconds(pid) - cpuBefore[k]) / jobs) * 1e6)]),
      );
      return { jobsPerSecond: jobs / ((now - first) / 1000), jobs, cpuUsPerJob };
    }
    await sleep(20);
  }
}

async function cpuPercent(pid, seconds) {
  const before = cpuSeconds(pid);
  await sleep(seconds * 1000);
  return ((cpuSeconds(pid) - before) / seconds) * 100;
}

/** `lines` matching `text` counted as a child prints them. */
function counter(child, text) {
  const c = { n: 0 };
  child.on((line) => {
    if (line.includes(text)) c.n++;
  });
  return c;
}

/**
 * Measures the figure on the Redis at `redisUrl` (its server's pid, if known, for its CPU) under
 * `prefix`: `rounds` alternating drains of `jobs` jobs (SDK worker, then HTTP worker), then the
 * API's CPU idle and with `idle` long polls for `idleSeconds` each (skipped when `idle` is 0).
 */
export async function httpWorkerFigures({
  redisUrl,
  redisPid,
  prefix,
  jobs = 3000,
  rounds = 1,
  idle = 100,
  idleSeconds = 30,
  nodeArgs = [],
  say = () => {},
}) {
  const apiKey = `bench-${randomBytes(18).toString('base64url')}`;
  const workerKey = `wbench-${randomBytes(18).toString('base64url')}`;
  const api = await startApi('hw-api', {
    redisUrl,
    prefix,
    apiKeys: `bench:${apiKey}`,
    env: { LONGRUN_WORKER_KEYS: `bench:${workerKey}`, LONGRUN_WORKER_RATE_LIMIT_RPS: '0' },
    nodeArgs,
  });
  const pids = (worker) => ({ worker, api: api.child.pid, redis: redisPid });
  const pyEnv = {
    LONGRUN_URL: api.base,
    LONGRUN_WORKER_KEY: workerKey,
    WORKER_MAX: '10',
    WORKER_WAIT_MS: '5000',
  };
  const python = (name) =>
    start(name, 'python3', ['examples/python-worker/worker.py'], {
      env: pyEnv,
      ready: '"msg":"worker ready"',
      timeoutMs: 20_000,
    });
  await (await python('py-register')).stop(); // registers the type: tasks of it are accepted
  const sdk = [];
  const http = [];
  for (let r = 0; r < rounds; r++) {
    await fill(api, apiKey, 'echo', { n: 1 }, jobs);
    const worker = await startWorker('sdk-worker', {
      redisUrl,
      prefix,
      logLevel: 'info',
      concurrency: 10,
      types: 'echo',
    });
    // Counted from the workers' own log lines: scraping /metrics this often costs CPU.
    const sdkDone = counter(worker.child, '"msg":"task completed"');
    sdk.push(await drainRate(() => sdkDone.n, jobs, pids(worker.child.pid)));
    await worker.child.stop();
    await fill(api, apiKey, PY_TYPE, { text: 'the quick brown fox' }, jobs);
    const py = await python('py-worker');
    const pyDone = counter(py, '"msg":"completed"');
    http.push(await drainRate(() => pyDone.n, jobs, pids(py.pid)));
    await py.stop();
    say(
      `HTTP worker round ${r + 1}: SDK ${num(sdk[r].jobsPerSecond)} jobs/s, HTTP ${num(http[r].jobsPerSecond)} jobs/s`,
    );
  }
  const metrics = await (await fetch(`${api.base}/metrics`)).text();
  const requests = metrics
    .split('\n')
    .filter(
      (l) => /^longrun_http_request_duration_seconds_(count|sum)/.test(l) && l.includes('worker'),
    );
  const idleFigures = idle > 0 ? await idlePolls(api, workerKey, idle, idleSeconds) : undefined;
  await api.child.stop();
  return {
    jobs,
    sdk,
    http,
    ratio: median(http.map((h, i) => h.jobsPerSecond / sdk[i].jobsPerSecond)),
    requests,
    ...idleFigures,
  };
}

/** The API's CPU (% of a core) idle, then with `n` long polls held open on an empty type. */
async function idlePolls(api, workerKey, n, seconds) {
  const headers = { authorization: `Bearer ${workerKey}`, 'content-type': 'application/json' };
  await sleep(2000);
  const apiCpuPercentIdle = await cpuPercent(api.child.pid, seconds);
  await fetch(`${api.base}/v1/worker/job-types/bench-empty`, {
    method: 'PUT',
    headers,
    body: JSON.stringify({ inputSchema: { type: 'object' } }),
  });
  let polling = true;
  let polls = 0;
  const poller = async () => {
    while (polling) {
      try {
        const res = await fetch(`${api.base}/v1/worker/leases`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ types: ['bench-empty'], max: 1, waitMs: 30_000 }),
        });
        await res.arrayBuffer();
        polls++;
      } catch {
        if (polling) await sleep(100); // the API is going away at the end
      }
    }
  };
  const pollers = Array.from({ length: n }, poller);
  await sleep(2000); // every poll open
  const apiCpuPercentWithPollers = await cpuPercent(api.child.pid, seconds);
  polling = false;
  void pollers;
  return {
    idlePollers: n,
    idleSeconds: seconds,
    apiCpuPercentIdle,
    apiCpuPercentWithPollers,
    polls,
  };
}

const cpuText = (x) =>
  `${num(x.worker)} / ${num(x.api)}${x.redis === undefined ? '' : ` / ${num(x.redis)}`} µs`;

/**
 * Figure 9 for bench/run.mjs: measured (rounds alternating, smaller with --quick), or undefined
 * with a warning when it cannot be (no python3) or fails (the rest of the run stands).
 */
export async function httpWorkerPart({ redisUrl, redisPid, prefix, quick, rounds, say, warn }) {
  const skip = httpWorkerSkip();
  if (skip) {
    warn(`figure 9 (HTTP worker) skipped: ${skip}`);
    return undefined;
  }
  const sizes = quick
    ? { jobs: 500, idle: 10, idleSeconds: 3 }
    : { jobs: 3000, idle: 100, idleSeconds: 30 };
  try {
    const hw = await httpWorkerFigures({ redisUrl, redisPid, prefix, rounds, say, ...sizes });
    say(`HTTP worker: ${(hw.ratio ?? NaN).toFixed(2)}x the SDK worker's jobs/s (median of rounds)`);
    return hw;
  } catch (error) {
    warn(`figure 9 (HTTP worker) failed: ${error instanceof Error ? error.message : error}`);
    return undefined;
  }
}

/** Figure 9's rows for the table. */
export function httpWorkerRows(hw) {
  const med = (xs) => median(xs.map((x) => x.jobsPerSecond));
  const rows = [
    {
      key: 'httpworker.drain',
      id: '9',
      name: `HTTP worker (Python, max 10) drains ${num(hw.jobs)} jobs (jobs/s)`,
      value: num(med(hw.http)),
      ceiling: `SDK worker ${num(med(hw.sdk))}`,
      ratio: hw.ratio,
      goal: '≥ 0.50×',
      pass: hw.ratio >= 0.5,
    },
  ];
  if (hw.idlePollers) {
    const cost = hw.apiCpuPercentWithPollers - hw.apiCpuPercentIdle;
    rows.push({
      key: 'httpworker.idle',
      id: '9',
      name: `${hw.idlePollers} idle long-polling HTTP workers: API CPU (% of a core)`,
      value: `${cost.toFixed(2)} %`,
      ceiling: `idle ${hw.apiCpuPercentIdle.toFixed(2)} %`,
      ratio: undefined,
      goal: '< 5 %',
      pass: cost < 5,
    });
  }
  return rows;
}

/** Figure 9's details for docs/BENCHMARKS.md. */
export function httpWorkerMarkdown(hw) {
  const lines = hw.sdk.map(
    (s, i) =>
      `| ${i + 1} | ${num(s.jobsPerSecond)} | ${num(hw.http[i].jobsPerSecond)} | ${(hw.http[i].jobsPerSecond / s.jobsPerSecond).toFixed(2)} | ${cpuText(s.cpuUsPerJob)} | ${cpuText(hw.http[i].cpuUsPerJob)} |`,
  );
  return [
    '| round | SDK worker jobs/s | HTTP worker jobs/s | ratio | CPU per job, SDK (worker / API / Redis) | CPU per job, HTTP (Python / API / Redis) |',
    '| ---: | ---: | ---: | ---: | --- | --- |',
    ...lines,
    '',
    `Worker-route requests over the drains (\`longrun_http_request_duration_seconds_\` count, and sum in seconds): ${hw.requests.map((l) => `\`${l.replace('longrun_http_request_duration_seconds_', '')}\``).join(', ')}.`,
    ...(hw.idlePollers
      ? [
          '',
          `${hw.idlePollers} idle long polls (\`waitMs\` 30 000, re-polled as each ends; ${num(hw.polls)} answered) for ${hw.idleSeconds} s: the API used ${hw.apiCpuPercentWithPollers.toFixed(2)} % of a core, against ${hw.apiCpuPercentIdle.toFixed(2)} % with none.`,
        ]
      : []),
  ].join('\n');
}
