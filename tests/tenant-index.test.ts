// A tenant's index (`<prefix>:tenant:<t>:tasks`, the list behind GET /v1/jobs) follows its tasks'
// own expiry, not LONGRUN_MAX_TTL_MS (issue 27, item 4): entries of expired tasks are swept a few
// per create, and the index key lives as long as its longest-lived task.
import { Redis } from 'ioredis';
import { afterAll, expect, inject, it } from 'vitest';
import { waitFor } from './helpers/http.js';
import { startInProcessApi, type InProcessApi, oneShard } from './helpers/service.js';

// This file reads one shard's keys.
oneShard();

const redis = new Redis(inject('redisUrl'));
const cleanup: (() => Promise<unknown>)[] = [() => redis.quit()];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
});

async function submit(api: InProcessApi, ttlMs: number): Promise<string> {
  // No worker runs: the tasks stay queued until they expire.
  const res = await api.http('POST', '/v1/jobs', {
    body: { type: 'echo', input: { payload: 'x' }, ttlMs },
  });
  expect(res.status).toBe(202);
  return res.body.taskId as string;
}

it("drops expired tasks from the tenant's index a bounded number per create, and the index expires with its last task", async () => {
  const api = await startInProcessApi({ maxTtlMs: 7 * 86_400_000 });
  cleanup.push(() => api.close());
  const index = api.store.keys.index('alpha');
  const live: string[] = [];
  for (let i = 0; i < 3; i++) live.push(await submit(api, 60_000));
  // 40 short tasks in one request (one turn), so none expires before the last is made.
  const batch = await api.http('POST', '/v1/jobs/batch', {
    body: {
      tasks: Array.from({ length: 40 }, () => ({
        type: 'echo',
        input: { payload: 'x' },
        ttlMs: 1000,
      })),
    },
  });
  expect(batch.status).toBe(207);
  const short: string[] = batch.body.results.map(
    (r: { task: { taskId: string } }) => r.task.taskId,
  );
  expect(short).toHaveLength(40);
  expect(await redis.zcard(index)).toBe(43);

  // Wait for the short tasks' records to be gone (Redis expires them by their own ttl).
  await waitFor(
    async () => {
      const left = await Promise.all(short.map((id) => redis.exists(api.store.keys.task(id))));
      return left.every((n) => n === 0) || undefined;
    },
    { timeoutMs: 10_000, what: 'the short tasks to expire' },
  );

  // One create sweeps a few entries, not the whole index (bounded work per create)...
  live.push(await submit(api, 60_000));
  const afterOne = await redis.zcard(index);
  expect(afterOne).toBeLessThan(44);
  expect(44 - afterOne).toBeLessThanOrEqual(16);

  // ...and the creates that follow bring the index down to the live tasks.
  for (let i = 0; i < 30 && (await redis.zcard(index)) > live.length; i++) {
    live.push(await submit(api, 60_000));
  }
  expect(await redis.zcard(index)).toBe(live.length);
  const members = await redis.zrange(index, 0, -1);
  expect(members.map((m) => m.slice(m.indexOf(':') + 1)).sort()).toEqual([...live].sort());

  // The index lives as long as its longest-lived task (60 s here), not LONGRUN_MAX_TTL_MS.
  const pttl = await redis.pttl(index);
  expect(pttl).toBeGreaterThan(0);
  expect(pttl).toBeLessThanOrEqual(60_000);

  // A list still shows the live tasks, newest first.
  const list = await api.http('GET', '/v1/jobs?limit=100');
  expect(list.status).toBe(200);
  expect(list.body.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([...live].reverse());
});

it('an index of only short tasks is gone once they are', async () => {
  const api = await startInProcessApi();
  cleanup.push(() => api.close());
  const index = api.store.keys.index('alpha');
  for (let i = 0; i < 5; i++) await submit(api, 1000);
  const pttl = await redis.pttl(index);
  expect(pttl).toBeGreaterThan(0);
  expect(pttl).toBeLessThanOrEqual(1000);
  await waitFor(async () => ((await redis.exists(index)) === 0 ? true : undefined), {
    timeoutMs: 10_000,
    what: 'the index to expire',
  });
});
