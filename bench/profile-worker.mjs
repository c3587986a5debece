// CPU profile of one worker process draining echo jobs: submits them through the API while the
// queue is paused, starts `node --cpu-prof apps/worker/dist/main.js`, resumes, waits until the
// queue is empty, stops the worker and prints the profile summary. Private redis-server.
//
//   node bench/profile-worker.mjs [--jobs=20000] [--out=DIR] [--import=FILE] [--no-profile]
//                                [--api-env=KEY=VALUE ...] [--worker-env=KEY=VALUE ...]
//
// --import preloads a module into the worker (see bench/experiments/), --no-profile measures
// without the profiler: drain time and the worker's CPU per job.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { render, summarise } from './profile-summary.mjs';
import { cleanupAll, onCleanup, start, waitFor } from './lib/children.mjs';
import { ctx, post } from './lib/context.mjs';
import { withCpu } from './lib/cpu.mjs';
import { drained } from './lib/processing.mjs';
import { connect, removePrefix, startPrivateRedis } from './lib/redis.mjs';
import { longrunEnv, load, startApi } from './lib/services.mjs';
import { apiKey, root } from './lib/config.mjs';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '20000' },
    out: { type: 'string' },
    import: { type: 'string', multiple: true, default: [] },
    'no-profile': { type: 'boolean', default: false },
    // KEY=VALUE settings for the API (e.g. LONGRUN_TENANT_MAX_BYTES=0 to price the storage budget).
    'api-env': { type: 'string', multiple: true, default: [] },
    // KEY=VALUE settings for the worker (e.g. OTEL_EXPORTER_OTLP_ENDPOINT=… to price tracing).
    'worker-env': { type: 'string', multiple: true, default: [] },
  },
});
const jobs = Number(values.jobs);
const out = values.out ?? mkdtempSync(join(tmpdir(), 'longrun-worker-profile-'));

try {
  const own = await startPrivateRedis();
  ctx.redisUrl = own.url;
  ctx.redis = connect(own.url);
  onCleanup(() => ctx.redis.quit());
  const prefix = `bench-wprof-${Date.now().toString(36)}`;
  onCleanup(() => removePrefix(ctx.redis, prefix));
  const envOf = (list) =>
    Object.fromEntries(
      list.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
  const apiEnv = envOf(values['api-env']);
  const api = await startApi('api', {
    redisUrl: own.url,
    prefix,
    apiKeys: `bench:${apiKey}`,
    env: apiEnv,
  });
  const queue = new Queue('tasks.echo', { connection: ctx.redis, prefix }); // echo's own queue (decision 46)
  await queue.pause();
  await load(post(api, { amount: jobs }));
  const worker = await start(
    'worker',
    process.execPath,
    [
      ...(values['no-profile'] ? [] : ['--cpu-prof', '--cpu-prof-dir', out]),
      ...values.import.flatMap((file) => ['--import', resolve(file)]),
      join(root, 'apps/worker/dist/main.js'),
    ],
    {
      env: {
        ...longrunEnv(own.url, prefix),
        LOG_LEVEL: 'warn',
        LONGRUN_WORKER_CONCURRENCY: '100',
        LONGRUN_METRICS_PORT: '0',
        LONGRUN_METRICS_HOST: '127.0.0.1',
        ...envOf(values['worker-env']),
      },
    },
  );
  await waitFor(async () => (await queue.getWorkersCount()) >= 1, { intervalMs: 50 });
  const t0 = Date.now();
  const { cpu } = await withCpu([worker.pid, own.child.pid], async () => {
    await queue.resume();
    await drained(queue);
  });
  const ms = Date.now() - t0;
  console.log(
    `${jobs} jobs drained in ${ms} ms (${Math.round((jobs * 1000) / ms)} jobs/s); CPU per job: worker ${Math.round((cpu[0] * 1e6) / jobs)} µs, Redis ${Math.round((cpu[1] * 1e6) / jobs)} µs`,
  );
  await worker.stop('SIGTERM', 20_000);
  await queue.close();
  const file = readdirSync(out).find((f) => f.endsWith('.cpuprofile'));
  if (file) {
    console.log(
      render(summarise(JSON.parse(readFileSync(join(out, file), 'utf8'))), join(out, file)),
    );
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
