// `npm start`: build if needed, make sure a Redis answers (starting a local one when REDIS_URL is
// unset and nothing listens on 127.0.0.1:6379; its data goes under LONGRUN_DATA_DIR, default
// .data/), then run the API and one worker until Ctrl-C.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { findRedisServer, ping, startRedis } from './redis.mjs';

const root = resolve(import.meta.dirname, '..');
const say = (msg) => console.error(`[longrun] ${msg}`);

// LONGRUN_SKIP_BUILD=1 runs what is built as it is (the tests use it while other tests run dist/).
if (process.env.LONGRUN_SKIP_BUILD !== '1') {
  const build = spawnSync('npm', ['run', 'build', '--silent', '--', '--output-logs=errors-only'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

let redis = null;
const env = { ...process.env };
if (!env.REDIS_URL) {
  if (await ping('127.0.0.1', 6379)) {
    say('using the Redis that answers on 127.0.0.1:6379');
  } else {
    const bin = findRedisServer();
    if (!bin) {
      say('no Redis answers on 127.0.0.1:6379 and there is no redis-server binary.');
      say('Install one:   sudo apt-get install redis-server');
      say('or run one:    docker compose up -d redis   (publishes it on 127.0.0.1:6379)');
      say('or point at one: REDIS_URL=redis://host:6379 npm start');
      process.exit(1);
    }
    const dir = resolve(root, process.env.LONGRUN_DATA_DIR ?? '.data', 'redis');
    redis = await startRedis({ bin, port: 6379, dir, appendonly: true });
    say(`started redis-server on 127.0.0.1:6379 (AOF on, data in ${dir})`);
  }
  env.REDIS_URL = 'redis://127.0.0.1:6379';
}

// Without LONGRUN_API_KEYS: one development key, made once and kept beside the data, so an
// exported key still works after a restart. The API's own code keeps it (apps/api/src/dev-key.ts),
// so `npm run start:api` alone serves the same key.
// The same for HTTP workers (LONGRUN_WORKER_KEYS): a development worker key, so a worker in any
// language (examples/python-worker) runs beside `npm start` with the key its README reads.
// Both only for a development run (no LONGRUN_API_KEYS): a configured one gets only its own keys.
if (!env.LONGRUN_API_KEYS && env.NODE_ENV !== 'production') {
  const { devKey } = await import('../apps/api/dist/dev-key.js');
  const dataDir = resolve(root, process.env.LONGRUN_DATA_DIR ?? '.data');
  const kinds = [
    ['api', 'LONGRUN_API_KEYS', 'API key (tenant "dev")'],
    ['worker', 'LONGRUN_WORKER_KEYS', 'worker key (HTTP workers)'],
  ];
  for (const [kind, setting, what] of kinds) {
    if (env[setting]) continue;
    const { key, file } = devKey(dataDir, kind);
    env[setting] = `dev:${key}`;
    console.error(`\n  longrun dev ${what}: ${key}`);
    console.error(`  (kept in ${relative(process.cwd(), file) || file}; delete it for a new one)`);
  }
  console.error('');
}

// `npm start -- --bun`: the API and the worker on the pinned Bun (tools/bun) instead of Node.
const bun = process.argv.includes('--bun');
const runtime = bun ? resolve(root, 'tools/bun/node_modules/.bin/bun') : process.execPath;
if (bun && !existsSync(runtime)) {
  // Installed on first use (scripts/install-runtimes.mjs), not by every `npm ci`.
  spawnSync(process.execPath, [resolve(root, 'scripts/install-runtimes.mjs'), 'bun'], {
    stdio: 'inherit',
  });
  if (!existsSync(runtime)) {
    say(`no Bun at ${runtime}: node scripts/install-runtimes.mjs bun could not install it`);
    process.exit(1);
  }
}
if (bun) say('running the API and the worker on Bun');

const children = [
  ['api', 'apps/api/dist/main.js'],
  ['worker', 'apps/worker/dist/main.js'],
].map(([name, file]) => {
  const child = spawn(runtime, [file], { cwd: root, env, stdio: 'inherit' });
  child.on('exit', (code, signal) => {
    say(`${name} exited (${signal ?? code})`);
    if (!stopping) void stop(code ?? 1);
  });
  return child;
});

let stopping = false;
async function stop(code = 0) {
  stopping = true;
  await Promise.all(
    children.map(
      (c) =>
        new Promise((r) => {
          if (c.exitCode !== null || c.signalCode !== null) return r();
          c.once('exit', r);
          c.kill('SIGTERM');
        }),
    ),
  );
  if (redis) {
    say('stopping the local redis-server');
    await redis.stop();
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
// A supervisor stopping `npm start` signals npm alone: npm passes SIGTERM to the shell it runs
// this script in, which exits without passing it on. So under npm a parent gone counts as a stop
// too (checked twice a second), or the API, the worker and Redis would run on, orphaned.
if (process.env.npm_lifecycle_event) {
  const parent = process.ppid;
  setInterval(() => {
    if (stopping || process.ppid === parent) return;
    say('the process that started this one is gone: stopping');
    void stop(0);
  }, 500).unref();
}
