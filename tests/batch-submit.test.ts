// POST /v1/jobs/batch: up to 100 submits in one request, each validated and created on its own,
// answered in order with a status per item (207) (issue 16).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@longrun/client';
import { waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { KEY_A, startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';

let api: InProcessApi;
let worker: Proc;

beforeAll(async () => {
  api = await startInProcessApi();
  worker = await startWorker(api.prefix);
});
afterAll(async () => {
  await worker?.stop();
  await api?.close();
});

interface Item {
  status: number;
  replayed?: boolean;
  task?: { taskId: string; status: string; type: string };
  problem?: { status: number; type: string; errors?: { path: string }[] };
}

const batch = (tasks: unknown) => api.http('POST', '/v1/jobs/batch', { body: { tasks } });

describe('POST /v1/jobs/batch', () => {
  it('creates exactly the good items of 100, and answers each in order', async () => {
    const bad = new Map<number, [unknown, number, string]>([
      [7, [{ type: 'no-such-type', input: {} }, 400, 'type']],
      [23, [{ type: 'sleep', input: { ms: 'soon' } }, 422, 'input.ms']],
      [41, [{ type: 'echo', input: {}, ttl: 5 }, 400, '']],
      [77, [{ type: 'echo', input: {}, idempotencyKey: 'has spaces' }, 400, 'idempotencyKey']],
      [99, [{ type: 'echo', delayMs: 10, runAt: '2030-01-01T00:00:00Z' }, 400, 'runAt']],
    ]);
    const tasks = Array.from(
      { length: 100 },
      (_, i) => bad.get(i)?.[0] ?? { type: 'echo', input: { i } },
    );
    const res = await batch(tasks);
    expect(res.status, res.text).toBe(207);
    const results = res.body.results as Item[];
    expect(results).toHaveLength(100);
    for (const [i, item] of results.entries()) {
      const expected = bad.get(i);
      if (!expected) {
        expect(item.status, JSON.stringify(item)).toBe(202);
        expect(item.task).toMatchObject({ status: 'working', type: 'echo' });
        continue;
      }
      expect(item.status, `item ${i}`).toBe(expected[1]);
      expect(item.problem?.status).toBe(expected[1]);
      expect(item.problem?.type).toMatch(/^\/problems\//);
      if (expected[2]) {
        expect(item.problem?.errors?.map((e) => e.path)).toContain(expected[2]);
      }
    }
    // Exactly the 95 good ones exist, and each runs with its own input.
    const listed = (await api.http('GET', '/v1/jobs?limit=100')).body.tasks as { taskId: string }[];
    const created = results.filter((r) => r.status === 202).map((r) => r.task!.taskId);
    expect(created).toHaveLength(95);
    expect(new Set(listed.map((t) => t.taskId))).toEqual(new Set(created));
    const last = created.at(-1)!;
    const done = await waitFor(
      async () => {
        const h = (await api.http('GET', `/v1/jobs/${last}`)).body;
        return h.status === 'completed' ? h : undefined;
      },
      { what: 'the last good item completed' },
    );
    expect(done.result).toEqual({ i: 98 });
  });

  it('an idempotencyKey per item behaves as on a single submit', async () => {
    const tasks = [
      { type: 'echo', input: { a: 1 }, idempotencyKey: 'batch-key-a' },
      { type: 'echo', input: { b: 2 }, idempotencyKey: 'batch-key-b' },
      { type: 'echo', input: { c: 3 } },
    ];
    const first = (await batch(tasks)).body.results as Item[];
    const again = (await batch(tasks)).body.results as Item[];
    expect(again[0]).toMatchObject({ status: 202, replayed: true });
    expect(again[0]!.task!.taskId).toBe(first[0]!.task!.taskId);
    expect(again[1]!.task!.taskId).toBe(first[1]!.task!.taskId);
    expect(again[2]!.replayed).toBeUndefined(); // no key: a new task
    expect(again[2]!.task!.taskId).not.toBe(first[2]!.task!.taskId);
    // The same key with another body is refused, as on a single submit; the single route sees it.
    const reused = (
      await batch([{ type: 'echo', input: { a: 99 }, idempotencyKey: 'batch-key-a' }])
    ).body.results as Item[];
    expect(reused[0]).toMatchObject({ status: 422 });
    const single = await api.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: { a: 1 } },
      headers: { 'idempotency-key': 'batch-key-a' },
    });
    expect(single.body.taskId).toBe(first[0]!.task!.taskId);
  });

  it('refuses a bad envelope with one 400 and creates nothing', async () => {
    const before = ((await api.http('GET', '/v1/jobs?limit=100')).body.tasks as unknown[]).length;
    for (const body of [
      { tasks: [] },
      { tasks: Array(101).fill({ type: 'echo' }) },
      { task: [] },
      [1],
    ]) {
      const res = await api.http('POST', '/v1/jobs/batch', { body });
      expect(res.status, JSON.stringify(body).slice(0, 40)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    const after = ((await api.http('GET', '/v1/jobs?limit=100')).body.tasks as unknown[]).length;
    expect(after).toBe(before);
  });
});

describe('client.submitBatch', () => {
  it('sends the items with their options, each keyed, and returns the outcomes in order', async () => {
    const lr = createClient({ baseUrl: api.url, apiKey: KEY_A });
    const items = [
      { type: 'echo', input: { n: 1 }, idempotencyKey: 'client-batch-1' },
      { type: 'echo', input: { n: 2 }, delayMs: 60_000 },
      { type: 'sleep', input: { ms: 'x' } },
    ];
    const results = await lr.submitBatch(items);
    expect(results.map((r) => r.status)).toEqual([202, 202, 422]);
    expect(results[1]!.task?.statusMessage).toBe('scheduled');
    expect(results[2]!.problem?.status).toBe(422);
    // A second send of the same keyed item finds the first task.
    const again = await lr.submitBatch([items[0]!]);
    expect(again[0]).toMatchObject({ status: 202, replayed: true });
    expect(again[0]!.task?.taskId).toBe(results[0]!.task?.taskId);
  });
});

describe('GET /v1/jobs?type=', () => {
  it('lists only the tasks of that type, with status and pagination as before', async () => {
    const res = await batch([
      { type: 'sleep', input: { ms: 60_000 } },
      { type: 'sleep', input: { ms: 60_000 } },
      { type: 'sleep', input: { ms: 60_000 } },
    ]);
    const sleeps = new Set((res.body.results as Item[]).map((r) => r.task!.taskId));
    const first = (await api.http('GET', '/v1/jobs?type=sleep&limit=2')).body;
    expect(first.tasks).toHaveLength(2);
    const second = (await api.http('GET', `/v1/jobs?type=sleep&limit=2&cursor=${first.nextCursor}`))
      .body;
    const listed = [...first.tasks, ...second.tasks] as { taskId: string; type: string }[];
    expect(listed.every((t) => t.type === 'sleep')).toBe(true);
    expect(new Set(listed.map((t) => t.taskId))).toEqual(sleeps);
    const working = (await api.http('GET', '/v1/jobs?type=sleep&status=completed')).body.tasks;
    expect(working).toEqual([]);
    expect((await api.http('GET', '/v1/jobs?type=')).status).toBe(400);
    for (const id of sleeps) await api.http('POST', `/v1/jobs/${id}/cancel`);
  });
});
