import { describe, expect, it } from 'vitest';
import { startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';
import {
  handleOf,
  stopAfterEach,
  submitTask,
  terminal,
  untilHandle,
  type HandleJson,
} from './helpers/tasks.js';

// Issue 40, item 12: `ctx.runTask(s)` items take `ttlMs`, `timeoutMs`, `delayMs`, `tags` and
// `idempotencyKey` (scoped to the parent) as a submit does, checked the same way. The stock
// `durable` type passes its input's `childOptions` to each child as given.

const started = stopAfterEach();

async function setUp(): Promise<InProcessApi> {
  const a = started.api(await startInProcessApi());
  started.proc(await startWorker(a.prefix, { LONGRUN_WORKER_CONCURRENCY: '4' }));
  return a;
}

const submit = submitTask;
const handle = handleOf;
const until = (a: InProcessApi, id: string, check: (h: HandleJson) => boolean, what: string) =>
  untilHandle(a, id, check, what, 20_000);

describe('durable tasks: child options', () => {
  it('ttlMs, timeoutMs, delayMs and tags reach the child', async () => {
    const a = await setUp();
    const before = Date.now();
    const id = await submit(a, {
      type: 'durable',
      input: {
        children: 1,
        childSleepMs: 60_000,
        childOptions: { ttlMs: 120_000, timeoutMs: 2000, delayMs: 1500, tags: ['nightly', 'eu'] },
      },
    });
    const parent = await until(a, id, (h) => h.childTaskIds?.length === 1, 'its child');
    const childId = parent.childTaskIds[0] as string;
    const child = await handle(a, childId);
    expect(child.ttlMs).toBe(120_000);
    expect(child.tags).toEqual(['nightly', 'eu']);
    const record = await a.parts.shardOf(childId).store.get(childId);
    expect(record?.timeoutMs).toBe(2000);
    expect(record?.runAt).toBeGreaterThanOrEqual(before + 1500);
    // The timeout ends the 60 s sleep: the child fails (`timeout`), and the parent goes on.
    const done = await until(a, id, terminal, 'terminal');
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.result.children[0]).toMatchObject({
      taskId: childId,
      status: 'failed',
      error: { code: 'timeout' },
    });
  }, 60_000);

  it('idempotencyKey is scoped to the parent: two parents get two children, one parent one', async () => {
    const a = await setUp();
    const input = { children: 1, childBatches: 2, childOptions: { idempotencyKey: 'report-1' } };
    const first = await submit(a, { type: 'durable', input });
    const second = await submit(a, { type: 'durable', input });
    const [one, two] = [
      await until(a, first, terminal, 'terminal'),
      await until(a, second, terminal, 'terminal'),
    ];
    for (const done of [one, two]) {
      expect(done.status, JSON.stringify(done)).toBe('completed');
      // Both batches of one parent got the same child.
      const ids = (done.result.children as { taskId: string }[]).map((c) => c.taskId);
      expect(ids).toHaveLength(2);
      expect(ids[0]).toBe(ids[1]);
      expect(done.childTaskIds).toEqual([ids[0]]);
    }
    expect(one.childTaskIds[0]).not.toBe(two.childTaskIds[0]);
  }, 60_000);

  it('an option a submit would refuse fails the parent with child-invalid, without retry', async () => {
    const a = await setUp();
    for (const childOptions of [{ ttlMs: 5 }, { tags: ['a', 'a'] }, { idempotencyKey: '' }]) {
      const id = await submit(a, { type: 'durable', input: { children: 1, childOptions } });
      const done = await until(a, id, terminal, 'terminal');
      expect(done.status, JSON.stringify(done)).toBe('failed');
      expect(done.error.code, JSON.stringify(done)).toBe('child-invalid');
      expect(done.error.message).toContain(Object.keys(childOptions)[0]);
    }
  }, 60_000);
});
