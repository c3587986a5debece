import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { httpClient, type HttpResult } from './helpers/http.js';
import { startApp, type Proc } from './helpers/processes.js';
import { API_KEYS, KEY_A, uniquePrefix } from './helpers/service.js';

// Issue 41, item 5: worker routes are limited per worker key (LONGRUN_WORKER_RATE_LIMIT_RPS),
// `429` + `Retry-After`, as the tenants' routes are per tenant. The real API process.

const W1_KEY = 'w1-storm-key-0123456789';
const W2_KEY = 'w2-calm-key-0123456789';
const RPS = 5;
let api: Proc;
let w1: ReturnType<typeof httpClient>;
let w2: ReturnType<typeof httpClient>;
let tenant: ReturnType<typeof httpClient>;

beforeAll(async () => {
  api = await startApp('api', {
    REDIS_URL: inject('redisUrl'),
    LONGRUN_PREFIX: uniquePrefix(),
    LONGRUN_API_KEYS: API_KEYS,
    LONGRUN_WORKER_KEYS: `w1:${W1_KEY},w2:${W2_KEY}`,
    LONGRUN_WORKER_RATE_LIMIT_RPS: String(RPS),
    PORT: '0',
    HOST: '127.0.0.1',
  });
  const base = `http://127.0.0.1:${api.ready.port as number}`;
  w1 = httpClient(base, W1_KEY);
  w2 = httpClient(base, W2_KEY);
  tenant = httpClient(base, KEY_A);
  const reg = await w2('PUT', '/v1/worker/job-types/calm', { body: { inputSchema: {} } });
  expect(reg.status).toBe(200);
}, 30_000);

afterAll(() => api?.stop());

function checkLimited(results: HttpResult[], what: string): void {
  const limited = results.filter((r) => r.status === 429);
  // One window may end during the burst on a loaded machine: at most two windows' worth pass.
  expect(results.length - limited.length, what).toBeLessThanOrEqual(2 * RPS);
  expect(limited.length, what).toBeGreaterThan(0);
  expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(limited[0]!.body.type).toBe('/problems/rate-limited');
}

describe('the per-worker-key request limit (issue 41, item 5)', () => {
  it('answers 429 with Retry-After past the limit, on every worker route; another key and the tenants go on', async () => {
    const beats = await Promise.all(
      Array.from({ length: 30 }, () =>
        w1('POST', '/v1/worker/leases/not-a-lease/heartbeat', { body: {} }),
      ),
    );
    checkLimited(beats, 'heartbeats');
    expect(beats.filter((r) => r.status !== 429).every((r) => r.status === 404)).toBe(true);
    // Another worker key has its own budget, and tenants are not counted here.
    const calm = await w2('POST', '/v1/worker/leases', { body: { types: ['calm'] } });
    expect(calm.status).toBe(200);
    expect((await tenant('GET', '/v1/jobs')).status).toBe(200);
    // Lease calls (the fast lane) count too.
    await new Promise((r) => setTimeout(r, 1100));
    const leases = await Promise.all(
      Array.from({ length: 30 }, () =>
        w1('POST', '/v1/worker/leases', { body: { types: ['no-such-type'] } }),
      ),
    );
    checkLimited(leases, 'lease calls');
    await new Promise((r) => setTimeout(r, 1100));
    const after = await w1('POST', '/v1/worker/leases/not-a-lease/heartbeat', { body: {} });
    expect(after.status).toBe(404);
  });
});
