// The storage budget is on by default (issue 27, item 16): with LONGRUN_TENANT_MAX_BYTES unset a
// tenant may keep a quarter of Redis's maxmemory, so one tenant filling Redis with large, long-
// lived tasks is refused (429 storage-budget) before the store is full, and another tenant's
// submits still go through. Finished tasks' results count. A Redis of its own with a small
// maxmemory; the API and a worker as processes with their default configuration.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { httpClient, waitFor } from './helpers/http.js';
import { startApiProcess, startApp } from './helpers/processes.js';
import { API_KEYS, KEY_A, KEY_B, uniquePrefix } from './helpers/service.js';
// @ts-expect-error plain ESM helper shared with `npm start`
import { findRedisServer, freePort, startRedis } from '../scripts/redis.mjs';

const MAXMEMORY = 32 * 1024 * 1024;
const PAYLOAD = 'x'.repeat(200_000);

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await Promise.resolve()
      .then(cleanup)
      .catch(() => undefined);
  }
});

it("with no LONGRUN_TENANT_MAX_BYTES a tenant is refused at a quarter of maxmemory, finished tasks' results counted, and another tenant still submits", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'longrun-budget-redis-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const bin = findRedisServer();
  expect(bin, 'redis-server binary').toBeTruthy();
  const server = await startRedis({
    bin,
    port: await freePort(),
    dir,
    appendonly: false,
    args: ['--maxmemory', String(MAXMEMORY)],
  });
  cleanups.push(() => server.stop());
  const admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  admin.on('error', () => undefined);
  cleanups.push(() => admin.quit().catch(() => admin.disconnect()));

  const prefix = uniquePrefix();
  const env = { REDIS_URL: server.url as string, LONGRUN_PREFIX: prefix };
  const worker = await startApp('worker', {
    ...env,
    LONGRUN_METRICS_PORT: '0',
    LONGRUN_METRICS_HOST: '127.0.0.1',
  });
  cleanups.push(() => worker.stop());
  const apis = new Set<() => unknown>();
  cleanups.push(async () => {
    for (const stop of apis) await stop();
  });
  const api = await startApiProcess(apis, { ...env, LONGRUN_API_KEYS: API_KEYS });
  const alpha = httpClient(api.url, KEY_A);
  const beta = httpClient(api.url, KEY_B);

  // The budget is on, at a quarter of maxmemory.
  const metrics = async () => (await alpha('GET', '/metrics')).text;
  expect(await metrics()).toMatch(
    new RegExp(`^longrun_tenant_storage_budget_bytes ${MAXMEMORY / 4}$`, 'm'),
  );

  // Finished tasks count: three echoes keep their input and their result.
  const finished: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await alpha('POST', '/v1/jobs', {
      body: { type: 'echo', input: { payload: PAYLOAD } },
    });
    expect(res.status).toBe(202);
    finished.push(res.body.taskId as string);
  }
  for (const id of finished) {
    await waitFor(
      async () =>
        (await alpha('GET', `/v1/jobs/${id}`)).body.status === 'completed' ? true : undefined,
      { what: `task ${id} completed` },
    );
  }
  const alphaHash = createHash('sha256').update('alpha').digest('hex').slice(0, 12);
  const stored = Number(
    (await metrics())
      .split('\n')
      .find((l) => l.startsWith(`longrun_tenant_stored_bytes{tenant_hash="${alphaHash}"}`))
      ?.split(' ')[1],
  );
  expect(stored).toBeGreaterThanOrEqual(3 * 2 * PAYLOAD.length);

  // Alpha fills Redis with large tasks that wait an hour: refused by its budget, not by a full
  // store, after about a quarter of maxmemory.
  let accepted = 0;
  let refused: Awaited<ReturnType<typeof alpha>> | undefined;
  for (let i = 0; i < 200 && !refused; i++) {
    const res = await alpha('POST', '/v1/jobs', {
      body: {
        type: 'echo',
        input: { payload: PAYLOAD },
        delayMs: 3_600_000,
        ttlMs: 86_400_000,
      },
    });
    if (res.status === 202) accepted++;
    else refused = res;
  }
  expect(refused?.status, refused?.text).toBe(429);
  expect(refused?.body).toMatchObject({ type: '/problems/storage-budget' });
  // 8 MiB of 200 kB tasks, less what the finished ones keep (their input and result each).
  expect(accepted).toBeGreaterThan(20);
  expect(accepted).toBeLessThan(MAXMEMORY / 4 / PAYLOAD.length);
  const used = Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))?.[1]);
  expect(used).toBeLessThan(MAXMEMORY * 0.75);

  // Beta still submits, and its tasks run.
  const other = await beta('POST', '/v1/jobs', { body: { type: 'echo', input: { n: 1 } } });
  expect(other.status, other.text).toBe(202);
  await waitFor(
    async () =>
      (await beta('GET', `/v1/jobs/${other.body.taskId}`)).body.status === 'completed'
        ? true
        : undefined,
    { what: "beta's task completed" },
  );
}, 120_000);
