import { connect } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { waitFor } from './helpers/http.js';
import { startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';
import { handleOf, stopAfterEach, submitTask, terminal } from './helpers/tasks.js';

// Issue 40, items 7 and 2 (its child half): a durable parent waiting on its children re-checks
// them at O(1) cost and writes no event when nothing changed; a child that is gone counts on its
// parent as `child-gone`, and the parent goes on. The worker runs only the `durable` type, so the
// children (`echo`, `sleep`) stay queued: nothing but the parent's re-checks touches them. The
// re-check runs every LONGRUN_CHILD_RECHECK_MS (60 s by default; short here).

const started = stopAfterEach();
const conns: Redis[] = [];
afterEach(() => conns.splice(0).forEach((c) => c.disconnect()));

async function setUp(recheckMs: number): Promise<InProcessApi> {
  const a = started.api(await startInProcessApi());
  started.proc(
    await startWorker(a.prefix, {
      LONGRUN_WORKER_TYPES: 'durable',
      LONGRUN_CHILD_RECHECK_MS: String(recheckMs),
    }),
  );
  return a;
}

const submit = submitTask;
const handle = handleOf;

async function waiting(a: InProcessApi, id: string, n: number) {
  return waitFor(
    async () => {
      const h = await handle(a, id);
      return h.statusMessage === `waiting for ${n} of ${n} child tasks` ? h : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 50, what: `the parent waiting on ${n} children` },
  );
}

/** How many events the task's history holds. */
async function eventCount(a: InProcessApi, id: string): Promise<number> {
  const log = a.parts.shardOf(id).log;
  let n = 0;
  let after: string | undefined;
  for (;;) {
    const page = await log.events(id, after, 500);
    if (page.length === 0) return n;
    n += page.length;
    after = page.at(-1)!.id;
  }
}

/**
 * Redis's `MONITOR` on a plain socket (each command Redis runs, one line each), until `stop`.
 * (ioredis's monitor mode loses track of its replies under this much traffic.)
 */
async function monitor(): Promise<{ stop(): string[] }> {
  const url = new URL(inject('redisUrl'));
  const socket = connect(Number(url.port || 6379), url.hostname);
  const lines: string[] = [];
  let rest = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\r\n');
    rest = parts.pop()!;
    lines.push(...parts);
  });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write('MONITOR\r\n');
  await waitFor(async () => (lines.includes('+OK') ? true : undefined), { what: 'MONITOR' });
  return {
    stop() {
      socket.destroy();
      return lines.slice();
    },
  };
}

describe('durable tasks: a parent waiting on its children', () => {
  it('re-checks 40 children at a cost that does not grow with them, writing no event while nothing changes', async () => {
    const recheckMs = 300;
    const a = await setUp(recheckMs);
    const id = await submit(a, { type: 'durable', input: { children: 40 } });
    const parent = await waiting(a, id, 40);
    const parentKey = a.parts.shardOf(id).store.keys.task(id);
    const childKeys = new Set<string>(
      (parent.childTaskIds as string[]).map((c) => a.parts.shardOf(c).store.keys.task(c)),
    );
    await new Promise((r) => setTimeout(r, recheckMs * 2));
    const before = await eventCount(a, id);
    // Every command Redis runs for this parent and its children over a few re-checks.
    const seen = await monitor();
    const windowMs = recheckMs * 8;
    await new Promise((r) => setTimeout(r, windowMs));
    const lines = seen.stop();
    const childReads = lines.filter((l) => [...childKeys].some((k) => l.includes(`"${k}"`))).length;
    const parentCalls = lines.filter((l) => l.includes(`"${parentKey}"`)).length;
    // Re-checks ran (each touches the parent's record a few times)…
    expect(parentCalls).toBeGreaterThanOrEqual(6);
    // …read at most 8 children each (a fixed few in turn), not all 40 of them…
    const rechecks = Math.ceil(windowMs / recheckMs) + 2;
    expect(childReads).toBeLessThanOrEqual(8 * rechecks);
    expect(childReads).toBeLessThan(40 * (rechecks / 3));
    // …and wrote no event: the parent still waits on 40 of 40.
    expect(await eventCount(a, id)).toBe(before);
    expect((await handle(a, id)).statusMessage).toBe('waiting for 40 of 40 child tasks');
  }, 60_000);

  it('a child whose record expired counts as child-gone within seconds of its expiry (60 s re-check)', async () => {
    const a = await setUp(60_000);
    // The child is never run (this worker runs only `durable`): its record expires at 2 s.
    const id = await submit(a, {
      type: 'durable',
      input: { children: 1, childOptions: { ttlMs: 2000 } },
    });
    const parent = await waiting(a, id, 1);
    const done = await waitFor(
      async () => {
        const h = await handle(a, id);
        return terminal(h) ? h : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100, what: 'the parent to go on' },
    );
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.result.children).toEqual([
      {
        taskId: parent.childTaskIds[0],
        status: 'failed',
        error: { code: 'child-gone', message: expect.any(String) },
      },
    ]);
  }, 60_000);

  it('a child that is gone counts as child-gone at the next re-check, and the parent goes on', async () => {
    const a = await setUp(500);
    const id = await submit(a, { type: 'durable', input: { children: 2 } });
    const parent = await waiting(a, id, 2);
    const [gone, other] = parent.childTaskIds as string[];
    // The first child's record is deleted (as an operator or an eviction would), the other cancelled.
    const redis = new Redis(inject('redisUrl'));
    conns.push(redis);
    await redis.del(a.parts.shardOf(gone!).store.keys.task(gone!));
    expect((await a.http('POST', `/v1/jobs/${other}/cancel`)).status).toBe(200);
    const done = await waitFor(
      async () => {
        const h = await handle(a, id);
        return terminal(h) ? h : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'the parent to go on' },
    );
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.result.children).toEqual([
      {
        taskId: gone,
        status: 'failed',
        error: { code: 'child-gone', message: expect.any(String) },
      },
      expect.objectContaining({ taskId: other, status: 'cancelled' }),
    ]);
  }, 60_000);
});
