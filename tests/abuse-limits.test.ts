import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient } from './helpers/http.js';
import { KEY_B, startInProcessApi, type InProcessApi } from './helpers/service.js';

describe('per-tenant rate limit', () => {
  let api: InProcessApi;
  beforeAll(async () => {
    api = await startInProcessApi({ rateLimitRps: 5 });
  });
  afterAll(() => api.close());

  it('answers 429 with Retry-After past the limit, per tenant', async () => {
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api.http('GET', '/v1/jobs')),
    );
    // The window is one second from the first request; on a loaded machine the burst may
    // outlast it, and each window started admits 5 more.
    const windows = Math.floor((Date.now() - started) / 1000) + 1;
    const limited = results.filter((r) => r.status === 429);
    expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(5 * windows);
    expect(limited.length).toBeGreaterThanOrEqual(Math.min(15, 20 - 5 * windows));
    expect(limited.length).toBeGreaterThan(0);
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited[0]!.body.type).toMatch(/rate-limited$/);
    // Another tenant has its own budget.
    expect((await httpClient(api.url, KEY_B)('GET', '/v1/jobs')).status).toBe(200);
  });

  it('lets the tenant in again after the window', async () => {
    await new Promise((r) => setTimeout(r, 1100));
    expect((await api.http('GET', '/v1/jobs')).status).toBe(200);
  });
});

describe('cap on open tasks', () => {
  let api: InProcessApi;
  beforeAll(async () => {
    api = await startInProcessApi({ maxOpenTasks: 3 }); // no worker: tasks stay open
  });
  afterAll(() => api.close());

  it('refuses a submit past the cap with 429, frees a slot on cancel and on expiry', async () => {
    const key = randomUUID();
    const first = await api.http('POST', '/v1/jobs', {
      body: { type: 'sleep', input: { ms: 1 } },
      headers: { 'idempotency-key': key },
    });
    const second = await api.http('POST', '/v1/jobs', {
      body: { type: 'sleep', input: { ms: 2 } },
    });
    const third = await api.http('POST', '/v1/jobs', {
      body: { type: 'sleep', input: { ms: 3 }, ttlMs: 1000 },
    });
    expect([first.status, second.status, third.status]).toEqual([202, 202, 202]);

    const refused = await api.http('POST', '/v1/jobs', {
      body: { type: 'sleep', input: { ms: 4 } },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.type).toMatch(/too-many-open-tasks$/);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect((await api.http('GET', '/v1/jobs')).body.tasks).toHaveLength(3); // nothing stored

    // A replay of an accepted request is not a new task: still answered.
    const replay = await api.http('POST', '/v1/jobs', {
      body: { type: 'sleep', input: { ms: 1 } },
      headers: { 'idempotency-key': key },
    });
    expect(replay.status).toBe(202);
    expect(replay.body.taskId).toBe(first.body.taskId);

    await api.http('POST', `/v1/jobs/${second.body.taskId}/cancel`);
    expect((await api.http('POST', '/v1/jobs', { body: { type: 'echo' } })).status).toBe(202);
    expect((await api.http('POST', '/v1/jobs', { body: { type: 'echo' } })).status).toBe(429);

    await new Promise((r) => setTimeout(r, 1100)); // the 1 s task expires
    expect((await api.http('POST', '/v1/jobs', { body: { type: 'echo' } })).status).toBe(202);
  });
});
