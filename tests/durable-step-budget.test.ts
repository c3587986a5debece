import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { waitFor } from './helpers/http.js';
import { startInProcessApi, startWorker } from './helpers/service.js';
import { stopAfterEach } from './helpers/tasks.js';

// Every byte a durable task stores counts against its tenant's storage budget (issue 40, item
// 5): step results and waitpoint data too, not only the record, input and result. A step whose
// result would pass the budget fails its task with `storage-budget` (no retry); waitpoint data
// that would pass it is refused 429 as a submit is; the bytes come back when the task goes.

const BUDGET = 12_000;
const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());
const started = stopAfterEach();

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a task handle as JSON
type Json = any;

describe('durable steps and waitpoint data count against the storage budget', () => {
  it('fill it: usage rises, a submit is refused, the step past it fails the task; forgetting gives the bytes back', async () => {
    const api = await startInProcessApi({ tenantMaxBytes: BUDGET });
    started.api(api);
    // attempts: the stock type's default; storage-budget must fail it without a retry.
    started.proc(await startWorker(api.prefix, { LONGRUN_TENANT_MAX_BYTES: String(BUDGET) }));
    const usage = async () => {
      const [key] = await redis.keys(`${api.prefix}:tenant:*:usage`);
      return Number((await redis.hget(key!, '#total')) ?? 0);
    };
    const handle = async (id: string): Promise<Json> =>
      (await api.http('GET', `/v1/jobs/${id}`)).body;
    const until = (id: string, check: (h: Json) => boolean, what: string) =>
      waitFor(async () => ((h) => (check(h) ? h : undefined))(await handle(id)), {
        what,
        timeoutMs: 20_000,
      });
    const pad = { type: 'echo', input: { pad: 'p'.repeat(2500) } };

    // A task waiting on its waitpoint, small.
    const waiter = await api.http('POST', '/v1/jobs', {
      body: { type: 'durable', input: { waitpointTimeoutMs: 60_000 } },
    });
    expect(waiter.status, waiter.text).toBe(202);
    const wid = waiter.body.taskId as string;
    await until(wid, (h) => String(h.statusMessage).startsWith('waiting for waitpoint'), 'waiting');
    const before = await usage();

    // Steps of 3 000 bytes each: three fit (with the records), the fourth does not.
    const res = await api.http('POST', '/v1/jobs', {
      body: { type: 'durable', input: { bigStepBytes: 3000, bigSteps: 4 } },
    });
    expect(res.status, res.text).toBe(202);
    const id = res.body.taskId as string;
    const done = await until(id, (h) => ['completed', 'failed'].includes(h.status), 'the end');
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'storage-budget' });
    expect(done.steps.map((s: { name: string }) => s.name)).toEqual(['big', 'big2', 'big3']);
    // Failed at once: no retry ran it again.
    const history = await api.parts.shardOf(id).log.events(id, undefined, 500);
    expect(history.filter((e) => e.statusMessage.endsWith('retrying'))).toEqual([]);
    const filled = await usage();
    expect(filled - before).toBeGreaterThan(3 * 3000);
    expect(filled).toBeLessThanOrEqual(BUDGET);

    // The tenant's budget is spent: a submit of 2 500 bytes is refused, and so is waitpoint data.
    const refused = await api.http('POST', '/v1/jobs', { body: pad });
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.type).toBe('/problems/storage-budget');
    const data = await api.http('POST', `/v1/waitpoints/${wid}.1`, {
      body: { data: 'd'.repeat(2500) },
    });
    expect(data.status, data.text).toBe(429);
    expect(data.body.type).toBe('/problems/storage-budget');
    expect(data.headers.get('retry-after')).toMatch(/^\d+$/);

    // Forgetting the failed task gives its bytes back: both go through now.
    const forgot = await api.http('DELETE', `/v1/jobs/${id}`);
    expect(forgot.status, forgot.text).toBe(204);
    expect(await usage()).toBeLessThan(filled - 3 * 3000);
    expect((await api.http('POST', '/v1/jobs', { body: pad })).status).toBe(202);
    const late = await api.http('POST', `/v1/waitpoints/${wid}.1`, {
      body: { data: 'd'.repeat(2500) },
    });
    expect(late.status, late.text).toBe(200);
    const waited = await until(wid, (h) => h.status === 'completed', 'the waiter to complete');
    expect(waited.result.data).toHaveLength(2500);
  });
});
