// LONGRUN_TENANT_MAX_BYTES: what one tenant's tasks may keep in Redis (records with their inputs,
// results and answers), counted when written and given back when a task expires or is deleted.
// Past it that tenant's submits answer 429; other tenants are untouched (issue 13).
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { httpClient, waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { KEY_B, startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';

const BUDGET = 40_000;
const PAYLOAD = 'x'.repeat(4000); // an echo task keeps it twice: input and result

let api: InProcessApi;
let worker: Proc;

beforeAll(async () => {
  api = await startInProcessApi({ tenantMaxBytes: BUDGET });
  worker = await startWorker(api.prefix);
});
afterAll(async () => {
  await worker?.stop();
  await api?.close();
});

const alpha = () => api.http;
const beta = () => httpClient(api.url, KEY_B);

async function finished(id: string) {
  return waitFor(
    async () => {
      const h = (await alpha()('GET', `/v1/jobs/${id}`)).body;
      return h.status === 'completed' ? h : undefined;
    },
    { what: `task ${id} completed` },
  );
}

it("refuses a tenant's submits past its budget with 429, counting results, and not another tenant's", async () => {
  const accepted: string[] = [];
  let refused: Awaited<ReturnType<ReturnType<typeof alpha>>> | undefined;
  for (let i = 0; i < 20 && !refused; i++) {
    const res = await alpha()('POST', '/v1/jobs', {
      body: { type: 'echo', input: { payload: PAYLOAD } },
    });
    if (res.status === 202) {
      accepted.push(res.body.taskId as string);
      await finished(res.body.taskId as string); // its result counts as well
    } else refused = res;
  }
  // Each finished echo keeps ~8 KB (input + result) plus its record: 4 fit in 40 KB, not 10.
  expect(accepted.length).toBeGreaterThanOrEqual(3);
  expect(accepted.length).toBeLessThanOrEqual(5);
  expect(refused?.status).toBe(429);
  expect(refused?.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(refused?.body).toMatchObject({ status: 429, type: '/problems/storage-budget' });
  expect(refused?.body.detail).toMatch(new RegExp(`of its ${BUDGET}-byte storage budget`));
  expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
  expect((await alpha()('GET', '/v1/jobs')).body.tasks).toHaveLength(accepted.length);

  // The API's metrics show the tenant at its budget.
  const metrics = (await alpha()('GET', '/metrics')).text;
  expect(metrics).toMatch(new RegExp(`^longrun_tenant_storage_budget_bytes ${BUDGET}$`, 'm'));
  // /metrics needs no key: tenants appear as a hash of their name, never by name.
  expect(metrics).not.toMatch(/alpha|beta/);
  const alphaHash = createHash('sha256').update('alpha').digest('hex').slice(0, 12);
  const line = metrics
    .split('\n')
    .find((l) => l.startsWith(`longrun_tenant_stored_bytes{tenant_hash="${alphaHash}"}`));
  const stored = Number(line?.split(' ')[1]);
  expect(stored).toBeGreaterThan(BUDGET - 12_000);
  // Submits are checked against the budget; results are always stored, so the total may pass
  // it by what the tasks accepted before return (here one echo's result at most).
  expect(stored).toBeLessThanOrEqual(BUDGET + PAYLOAD.length + 100);

  // Another tenant is untouched.
  const other = await beta()('POST', '/v1/jobs', {
    body: { type: 'echo', input: { payload: PAYLOAD } },
  });
  expect(other.status).toBe(202);

  // Deleting finished tasks gives their bytes back.
  for (const id of accepted.slice(0, 2)) {
    expect((await alpha()('DELETE', `/v1/jobs/${id}`)).status).toBe(204);
  }
  const again = await alpha()('POST', '/v1/jobs', {
    body: { type: 'echo', input: { payload: PAYLOAD } },
  });
  expect(again.status).toBe(202);
});

it('gives the bytes of expired tasks back', async () => {
  const gamma = startInProcessApi({ tenantMaxBytes: 12_000 });
  const small = await gamma;
  const w = await startWorker(small.prefix);
  try {
    const first = await small.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: { payload: PAYLOAD }, ttlMs: 1500 },
    });
    expect(first.status).toBe(202);
    await waitFor(
      async () =>
        (await small.http('GET', `/v1/jobs/${first.body.taskId}`)).body.status === 'completed'
          ? true
          : undefined,
      { what: 'the first task completed' },
    );
    const full = await small.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: { payload: PAYLOAD } },
    });
    expect(full.status).toBe(429);
    // Once the first task's ttl has passed, its bytes are free again: by the Retry-After the
    // 429 gave (the budget counts a task until the end of the second it expires in).
    const retryAfterS = Number(full.headers.get('retry-after'));
    expect(retryAfterS).toBeGreaterThanOrEqual(1);
    expect(retryAfterS).toBeLessThanOrEqual(3);
    await new Promise((r) => setTimeout(r, retryAfterS * 1000));
    const later = await small.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: { payload: PAYLOAD } },
    });
    expect(later.status).toBe(202);
  } finally {
    await w.stop();
    await small.close();
  }
});
