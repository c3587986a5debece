import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';

// A durable task's children are made by the worker (issue 29): they count against the tenant's
// storage budget and are held to it as a submit through the API is. A child the budget has no
// room for is not made; `ctx.runTask(s)` throws `DurableTaskError` with code `storage-budget`
// (and when its bytes come back, `retryAfterMs`), which fails the parent unless its handler
// catches it. Without this a tenant's durable tasks could fill Redis past its budget.

const BUDGET = '6000';
const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());
const apis: InProcessApi[] = [];
const procs: Proc[] = [];
afterEach(async () => {
  await Promise.allSettled(procs.splice(0).map((p) => p.kill()));
  await Promise.allSettled(apis.splice(0).map((a) => a.close()));
});

describe('durable children and the storage budget', () => {
  it('makes children while the budget has room, then fails the parent with storage-budget', async () => {
    const api = await startInProcessApi({ tenantMaxBytes: Number(BUDGET) });
    apis.push(api);
    procs.push(await startWorker(api.prefix, { LONGRUN_TENANT_MAX_BYTES: BUDGET }));
    const res = await api.http('POST', '/v1/jobs', {
      body: { type: 'durable', input: { children: 200 } },
    });
    expect(res.status, res.text).toBe(202);
    const id = res.body.taskId as string;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a task handle as JSON
    const done: any = await waitFor(
      async () => {
        const h = await api.http('GET', `/v1/jobs/${id}`);
        return ['completed', 'failed'].includes(h.body.status) ? h.body : undefined;
      },
      { what: 'the parent to end', timeoutMs: 30_000 },
    );
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'storage-budget' });
    expect(done.error.message).toMatch(/storage budget/);
    // Some children were made, not all, and the tenant's stored bytes stay near its budget.
    const [index] = await redis.keys(`${api.prefix}:tenant:*:tasks`);
    const made = (await redis.zcard(index!)) - 1;
    expect(made).toBeGreaterThan(0);
    expect(made).toBeLessThan(200);
    const [usage] = await redis.keys(`${api.prefix}:tenant:*:usage`);
    expect(Number(await redis.hget(usage!, '#total'))).toBeLessThanOrEqual(Number(BUDGET) + 1000);
  });
});
