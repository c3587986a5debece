// Issue 31: the HTTP worker protocol against the SDK worker, on one machine, loopback only
// (figure 9 of `npm run bench`, alone).
//
//   npm run build && node bench/http-worker.mjs [--jobs 3000] [--rounds 1] [--idle 100]
//                                               [--idle-seconds 30] [--cpu-prof DIR]
//
// 1. Drain: `--jobs` tasks are queued with no worker running, then one worker process starts and
//    drains them; jobs/s = completions between the first and the last, over that time (start-up
//    excluded), counted from the worker's own log lines. The SDK worker: the stock worker (`echo`,
//    LONGRUN_WORKER_CONCURRENCY=10). The HTTP worker: examples/python-worker/worker.py
//    (`py-wordcount`, WORKER_MAX=10), one process. `--rounds` alternates the two. CPU per job of
//    the worker, the API and Redis from /proc/<pid>/stat over each drain.
// 2. Idle long polls: `--idle` HTTP workers each holding a long poll open (`waitMs` 30 000) on an
//    empty type, re-polling as each one ends, for `--idle-seconds`; the API's CPU over that time
//    (user + system) as a percentage of one core, beside the same API idle with no poller.
// Everything runs on a private redis-server (no persistence) on a free loopback port.
import { parseArgs } from 'node:util';
import { cleanupAll } from './lib/children.mjs';
import { httpWorkerFigures } from './lib/http-worker.mjs';
import { startPrivateRedis } from './lib/redis.mjs';

const { values: opts } = parseArgs({
  options: {
    jobs: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '1' },
    idle: { type: 'string', default: '100' },
    'idle-seconds': { type: 'string', default: '30' },
    /** A directory: the API runs with --cpu-prof there (e.g. to see where a lease's CPU goes). */
    'cpu-prof': { type: 'string' },
  },
});

async function main() {
  const redis = await startPrivateRedis();
  const figures = await httpWorkerFigures({
    redisUrl: redis.url,
    redisPid: redis.child.pid,
    prefix: 'bench31',
    jobs: Number(opts.jobs),
    rounds: Number(opts.rounds),
    idle: Number(opts.idle),
    idleSeconds: Number(opts['idle-seconds']),
    nodeArgs: opts['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${opts['cpu-prof']}`] : [],
    say: (msg) => console.error(`[http-worker] ${msg}`),
  });
  const { sdk, http, ...rest } = figures;
  const round = (r) => ({ ...r, jobsPerSecond: Math.round(r.jobsPerSecond) });
  console.log(JSON.stringify({ ...rest, sdk: sdk.map(round), http: http.map(round) }, null, 2));
  await cleanupAll();
  process.exit(0);
}

main().catch(async (error) => {
  console.error(error);
  await cleanupAll();
  process.exit(1);
});
