// `npm start` without LONGRUN_API_KEYS: one development key, kept under the data dir, the same on
// every start (a newcomer's exported key keeps working after a restart).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, expect, inject, it } from 'vitest';
import { startApp } from './helpers/processes.js';
import { uniquePrefix } from './helpers/service.js';

const root = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'longrun-devkey-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs `npm start`'s script until the API is ready; its keys and what the API answered them,
 * then stops it (SIGINT).
 */
async function startOnce(): Promise<{
  key: string;
  status: number;
  workerKey: string;
  workerStatus: number;
}> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL: inject('redisUrl'),
    LONGRUN_PREFIX: uniquePrefix(),
    LONGRUN_DATA_DIR: dir,
    LONGRUN_SKIP_BUILD: '1',
    LONGRUN_METRICS_PORT: '0',
    PORT: '0',
    HOST: '127.0.0.1',
  };
  delete env.LONGRUN_API_KEYS;
  delete env.LONGRUN_WORKER_KEYS;
  const child = spawn(process.execPath, ['scripts/start.mjs'], { cwd: root, env });
  const lines: string[] = [];
  for (const s of [child.stdout, child.stderr]) {
    createInterface({ input: s }).on('line', (l) => lines.push(l));
  }
  const exited = new Promise((r) => child.once('exit', r));
  try {
    const ready = await new Promise<Record<string, unknown>>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(lines.join('\n'))), 20_000);
      const check = setInterval(() => {
        const line = lines.find((l) => l.includes('"msg":"api ready"'));
        if (!line) return;
        clearInterval(check);
        clearTimeout(timer);
        ok(JSON.parse(line) as Record<string, unknown>);
      }, 50);
    });
    const key = /longrun dev API key \(tenant "dev"\): (\S+)/.exec(lines.join('\n'))?.[1] ?? '';
    const res = await fetch(`http://127.0.0.1:${String(ready.port)}/v1/jobs`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const workerKey =
      /longrun dev worker key \(HTTP workers\): (\S+)/.exec(lines.join('\n'))?.[1] ?? '';
    // Worker routes the worker key opens (and a tenant's key does not): it registers a type of
    // its own and leases it (`echo` is the SDK worker's: issue 41, a key leases what it owns).
    const asWorker = (method: string, path: string, body: unknown) =>
      fetch(`http://127.0.0.1:${String(ready.port)}${path}`, {
        method,
        headers: { authorization: `Bearer ${workerKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const registered = await asWorker('PUT', '/v1/worker/job-types/dev-key-check', {
      inputSchema: { type: 'object' },
    });
    expect(registered.status).toBe(200);
    const leases = await asWorker('POST', '/v1/worker/leases', {
      types: ['dev-key-check'],
      max: 1,
      waitMs: 0,
    });
    return { key, status: res.status, workerKey, workerStatus: leases.status };
  } finally {
    child.kill('SIGINT');
    await exited;
  }
}

it('makes one dev key, keeps it (mode 0600) and serves it on every start', async () => {
  const first = await startOnce();
  expect(first.key).toMatch(/^dev-[A-Za-z0-9_-]{20,}$/);
  expect(first.status).toBe(200);
  expect(statSync(join(dir, 'dev-api-key')).mode & 0o777).toBe(0o600);
  const second = await startOnce();
  expect(second.key).toBe(first.key);
  expect(second.status).toBe(200);
}, 60_000);

it('makes one dev worker key too (issue 41): kept, served to HTTP workers on every start', async () => {
  const first = await startOnce();
  expect(first.workerKey).toMatch(/^devworker-[A-Za-z0-9_-]{20,}$/);
  expect(first.workerKey).not.toBe(first.key);
  expect(first.workerStatus).toBe(200);
  expect(readFileSync(join(dir, 'dev-worker-key'), 'utf8').trim()).toBe(first.workerKey);
  expect(statSync(join(dir, 'dev-worker-key')).mode & 0o777).toBe(0o600);
  const second = await startOnce();
  expect(second.workerKey).toBe(first.workerKey);
  expect(second.workerStatus).toBe(200);
}, 60_000);

it('`npm run start:api` without keys serves the key `npm start` printed (the same file)', async () => {
  const first = await startOnce();
  // What `npm run start:api` runs: the built API alone, in the repository root.
  const api = await startApp('api', {
    REDIS_URL: inject('redisUrl'),
    LONGRUN_PREFIX: uniquePrefix(),
    LONGRUN_DATA_DIR: dir,
    LONGRUN_API_KEYS: '',
    NODE_ENV: 'development',
    PORT: '0',
    HOST: '127.0.0.1',
  });
  try {
    const banner = api.lines.find((l) => l.includes('longrun dev API key'));
    expect(banner, api.lines.join('\n')).toContain(first.key);
    const res = await fetch(`http://127.0.0.1:${String(api.ready.port)}/v1/jobs`, {
      headers: { authorization: `Bearer ${first.key}` },
    });
    expect(res.status).toBe(200);
  } finally {
    await api.stop();
  }
}, 60_000);
