// Issue 31: the HTTP worker protocol against the SDK worker, on one machine, loopback only.
//
//   npm run build && node bench/http-worker.mjs [--jobs 3000] [--idle 100] [--idle-seconds 30]
//
// 1. Drain: `--jobs` tasks are queued with no worker running, then one worker process starts and
//    drains them; jobs/s = completions between the first and the last, over that time (start-up
//    excluded). The SDK worker: the stock worker (`echo`, LONGRUN_WORKER_CONCURRENCY=10). The
//    HTTP worker: examples/python-worker/worker.py (`py-wordcount`, WORKER_MAX=10), one process.
//    Completions are read from the processes' /metrics (`longrun_jobs_processed_total`).
// 2. Idle long polls: `--idle` HTTP workers each holding a long poll open (`waitMs` 30 000) on an
//    empty type, re-polling as each one ends, for `--idle-seconds`; the API's CPU over that time
//    (user + system, /proc/<pid>/stat) as a percentage of one core, beside the same API idle with
//    no poller.
// Everything runs on a private redis-server (no persistence) on a free loopback port.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { cleanupAll, start } from './lib/children.mjs';
import { cpuSeconds } from './lib/cpu.mjs';
import { startPrivateRedis } from './lib/redis.mjs';
import { startApi, startWorker } from './lib/services.mjs';

const { values: opts } = parseArgs({
  options: {
    jobs: { type: 'string', default: '3000' },
    idle: { type: 'string', default: '100' },
    'idle-seconds': { type: 'string', default: '30' },
    /** A directory: the API runs with --cpu-prof there (e.g. to see where a lease's CPU goes). */
    'cpu-prof': { type: 'string' },
  },
});
const JOBS = Number(opts.jobs);
const IDLE = Number(opts.idle);
const IDLE_SECONDS = Number(opts['idle-seconds']);
const apiKey = `bench-${randomBytes(18).toString('base64url')}`;
const workerKey = `wbench-${randomBytes(18).toString('base64url')}`;
const say = (msg) => console.error(`[http-worker] ${msg}`);

/** Queues `n` tasks of `type` through the batch route, 100 a request, 8 requests at a time. */
async function fill(api, type, input, n) {
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
 * each of `pids` (by name) used per job meanwhile (microseconds).
 */
async function drainRate(read, n, pids) {
  let first;
  let firstCount = 0;
  let cpuBefore;
  for (;;) {
    const count = await read();
    const now = performance.now();
    if (first === undefined && count > 0) {
      [first, firstCount] = [now, count];
      cpuBefore = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
    }
    if (count >= n) {
      const jobs = count - firstCount;
      const cpuUsPerJob = Object.fromEntries(
        Object.entries(pids).map(([k, pid]) => [
          k,
          Math.round(((cpuSeconds(pid) - cpuBefore[k]) / jobs) * 1e6),
        ]),
      );
      return { jobsPerSecond: jobs / ((now - first) / 1000), n, cpuUsPerJob };
    }
    await sleep(20);
  }
}

async function cpuPercent(pid, seconds) {
  const before = cpuSeconds(pid);
  await sleep(seconds * 1000);
  return ((cpuSeconds(pid) - before) / seconds) * 100;
}

async function main() {
  const redis = await startPrivateRedis();
  const api = await startApi('api', {
    redisUrl: redis.url,
    prefix: 'bench31',
    apiKeys: `bench:${apiKey}`,
    env: { LONGRUN_WORKER_KEYS: `bench:${workerKey}` },
    nodeArgs: opts['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${opts['cpu-prof']}`] : [],
  });

  // 1a. One SDK worker drains JOBS echo tasks.
  await fill(api, 'echo', { n: 1 }, JOBS);
  say(`${JOBS} echo tasks queued; starting one SDK worker (concurrency 10)`);
  const sdk = await startWorker('sdk-worker', {
    redisUrl: redis.url,
    prefix: 'bench31',
    logLevel: 'info',
    concurrency: 10,
    types: 'echo',
  });
  // Counted from the worker's log lines, as for the HTTP worker (no /metrics scrapes meanwhile).
  let sdkCompleted = 0;
  sdk.child.on((line) => {
    if (line.includes('"msg":"task completed"')) sdkCompleted++;
  });
  const sdkRate = await drainRate(async () => sdkCompleted, JOBS, {
    worker: sdk.child.pid,
    api: api.child.pid,
    redis: redis.child.pid,
  });
  await sdk.child.stop();
  say(`SDK worker: ${sdkRate.jobsPerSecond.toFixed(0)} jobs/s`);

  // 1b. One HTTP worker process (Python, max 10) drains JOBS py-wordcount tasks. It registers the
  // type first: start it, stop it, queue the tasks, start it again.
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
  await (await python('py-register')).stop();
  await fill(api, 'py-wordcount', { text: 'the quick brown fox' }, JOBS);
  say(`${JOBS} py-wordcount tasks queued; starting one Python HTTP worker (max 10)`);
  const py = await python('py-worker');
  // Counted from the worker's own lines: scraping the API's /metrics this often would cost the
  // API more CPU than the leases do.
  let completed = 0;
  py.on((line) => {
    if (line.includes('"msg":"completed"')) completed++;
  });
  const httpRate = await drainRate(async () => completed, JOBS, {
    worker: py.pid,
    api: api.child.pid,
    redis: redis.child.pid,
  });
  await py.stop();
  say(`HTTP worker: ${httpRate.jobsPerSecond.toFixed(0)} jobs/s`);
  const requests = (await (await fetch(`${api.base}/metrics`)).text())
    .split('\n')
    .filter(
      (l) => l.startsWith('longrun_http_request_duration_seconds_count') && l.includes('worker'),
    );
  say(`worker requests:\n${requests.join('\n')}`);

  // 2. The API's CPU, idle, then with IDLE long polls held open.
  await sleep(2000);
  const idleCpu = await cpuPercent(api.child.pid, IDLE_SECONDS);
  await fetch(`${api.base}/v1/worker/job-types/bench-empty`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${workerKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ inputSchema: { type: 'object' } }),
  });
  let polling = true;
  let polls = 0;
  const poller = async () => {
    while (polling) {
      try {
        const res = await fetch(`${api.base}/v1/worker/leases`, {
          method: 'POST',
          headers: { authorization: `Bearer ${workerKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ types: ['bench-empty'], max: 1, waitMs: 30_000 }),
        });
        await res.arrayBuffer();
        polls++;
      } catch {
        if (polling) await sleep(100); // the API is going away at the end
      }
    }
  };
  const pollers = Array.from({ length: IDLE }, poller);
  await sleep(2000); // every poll open
  const pollCpu = await cpuPercent(api.child.pid, IDLE_SECONDS);
  polling = false;
  const result = {
    jobs: JOBS,
    sdkWorkerJobsPerSecond: Math.round(sdkRate.jobsPerSecond),
    httpWorkerJobsPerSecond: Math.round(httpRate.jobsPerSecond),
    ratio: Number((httpRate.jobsPerSecond / sdkRate.jobsPerSecond).toFixed(2)),
    sdkCpuUsPerJob: sdkRate.cpuUsPerJob,
    httpCpuUsPerJob: httpRate.cpuUsPerJob,
    idlePollers: IDLE,
    seconds: IDLE_SECONDS,
    apiCpuPercentIdle: Number(idleCpu.toFixed(2)),
    apiCpuPercentWithPollers: Number(pollCpu.toFixed(2)),
    pollsAnswered: polls,
  };
  console.log(JSON.stringify(result, null, 2));
  await cleanupAll();
  void pollers;
  process.exit(0);
}

main().catch(async (error) => {
  console.error(error);
  await cleanupAll();
  process.exit(1);
});
