// The processes under test (built API and worker, bare app, raw worker) and the load generators,
// each a separate process started through children.mjs.
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, run, start, waitFor } from './children.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const path = (p) => `${root}${p}`;
const node = process.execPath;
/**
 * What runs longrun's API and workers (not the ceilings, load generators or raw BullMQ, which
 * stay on this Node): `BENCH_APP_RUNTIME=tools/bun/node_modules/.bin/bun` measures them on Bun.
 */
const given = process.env.BENCH_APP_RUNTIME;
export const appRuntime = given ? (isAbsolute(given) ? given : path(given)) : node;

/** Environment every longrun process of the benchmark shares. */
export function longrunEnv(redisUrl, prefix) {
  return {
    REDIS_URL: redisUrl,
    LONGRUN_PREFIX: prefix,
    NODE_ENV: 'production',
    LONGRUN_WEBHOOK_ALLOW: '',
  };
}

async function httpOk(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

function alive(child) {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
    throw new Error(`${child.name} exited:\n${child.tail()}`);
  }
}

/**
 * Starts `node apps/api/dist/main.js` on a free loopback port with the benchmark settings
 * (LOG_LEVEL=warn, no rate limit, no open-task cap); ready once /readyz answers 200.
 */
export async function startApi(
  name,
  { redisUrl, prefix, apiKeys, nodeArgs = [], env = {}, checkout, runtime = appRuntime },
) {
  await registerStockTypes(redisUrl, prefix);
  const port = await freePort();
  const main = checkout ? join(checkout, 'apps/api/dist/main.js') : path('apps/api/dist/main.js');
  const child = await start(name, runtime, [...nodeArgs, main], {
    env: {
      ...longrunEnv(redisUrl, prefix),
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      LONGRUN_RATE_LIMIT_RPS: '0',
      LONGRUN_MAX_OPEN_TASKS: '0',
      LONGRUN_API_KEYS: apiKeys,
      ...env,
    },
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(async () => alive(child) ?? (await httpOk(`${base}/readyz`)), {
    timeoutMs: 30_000,
    intervalMs: 100,
    what: `${name} /readyz`,
  });
  return { name, child, port, base, prefix };
}

/**
 * Registers the stock job types in the prefix's registry, as a worker does when it starts, so
 * that an API measured without a worker accepts them (an hour; trees before the registry
 * ignore it).
 */
export async function registerStockTypes(redisUrl, prefix) {
  const { createRedis, describeJobType, JobTypeRegistry } = await import('@longrun/engine');
  const { catalog } = await import('@longrun/worker-app');
  const redis = createRedis(redisUrl, 'worker');
  try {
    const descriptors = [...catalog.values()].map(describeJobType);
    await new JobTypeRegistry(redis, prefix).publish('bench-seed', descriptors, 3_600_000);
  } finally {
    await redis.quit();
  }
}

/**
 * Starts `node apps/worker/dist/main.js` (metrics on a free loopback port). With LOG_LEVEL=info
 * it waits for the "worker ready" line; otherwise for `isReady()` (e.g. BullMQ's worker count).
 */
export async function startWorker(
  name,
  { redisUrl, prefix, logLevel = 'warn', concurrency = 100, types, isReady },
) {
  const metricsPort = await freePort();
  const env = {
    ...longrunEnv(redisUrl, prefix),
    LOG_LEVEL: logLevel,
    LONGRUN_WORKER_CONCURRENCY: String(concurrency),
    LONGRUN_METRICS_PORT: String(metricsPort),
    LONGRUN_METRICS_HOST: '127.0.0.1',
    ...(types ? { LONGRUN_WORKER_TYPES: types } : {}),
  };
  const info = logLevel === 'info' || logLevel === 'debug';
  const child = await start(name, appRuntime, [path('apps/worker/dist/main.js')], {
    env,
    ...(info ? { ready: '"msg":"worker ready"' } : {}),
  });
  if (!info) {
    await waitFor(
      async () =>
        alive(child) ??
        ((await httpOk(`http://127.0.0.1:${metricsPort}/healthz`)) && (await isReady())),
      { timeoutMs: 30_000, intervalMs: 50, what: `${name} ready` },
    );
  }
  return { name, child, metricsPort };
}

/** `longrun_jobs_processed_total{type, outcome}` of a worker, 0 when absent. */
export async function processed(worker, type, outcome) {
  const res = await fetch(`http://127.0.0.1:${worker.metricsPort}/metrics`);
  const text = await res.text();
  for (const line of text.split('\n')) {
    if (
      line.startsWith('longrun_jobs_processed_total{') &&
      line.includes(`type="${type}"`) &&
      line.includes(`outcome="${outcome}"`)
    ) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return 0;
}

export async function startBare() {
  const port = await freePort();
  const child = await start('bare-app', node, [path('bench/bare-app.mjs')], {
    env: { PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'production' },
    ready: '"msg":"bare ready"',
  });
  return { name: 'bare', child, port, base: `http://127.0.0.1:${port}` };
}

export async function startRawWorker({ redisUrl, prefix, queue, concurrency = 100 }) {
  return start('raw-worker', node, [path('bench/raw-worker.mjs')], {
    env: {
      REDIS_URL: redisUrl,
      BENCH_PREFIX: prefix,
      BENCH_QUEUE: queue,
      BENCH_CONCURRENCY: String(concurrency),
      NODE_ENV: 'production',
    },
    ready: '"msg":"raw worker ready"',
  });
}

const lastJson = (out) => JSON.parse(out.trim().split('\n').pop());

/** autocannon in a child process (bench/load-child.mjs). */
export async function load(options) {
  const timeoutMs = ((options.duration ?? 0) + 120) * 1000;
  return lastJson(
    await run('autocannon', node, [path('bench/load-child.mjs'), JSON.stringify(options)], {
      timeoutMs,
    }),
  );
}

/** Sequential, sub-millisecond latency probe in a child process (bench/latency-child.mjs). */
export async function latency(options) {
  return lastJson(
    await run('latency', node, [path('bench/latency-child.mjs'), JSON.stringify(options)], {
      timeoutMs: 60_000,
    }),
  );
}

/** Raw BullMQ adds in a child process (bench/raw-add.mjs). */
export async function rawAdd({ redisUrl, prefix, queue }, options) {
  return lastJson(
    await run('raw-add', node, [path('bench/raw-add.mjs'), JSON.stringify(options)], {
      env: { REDIS_URL: redisUrl, BENCH_PREFIX: prefix, BENCH_QUEUE: queue },
      timeoutMs: 180_000,
    }),
  );
}
