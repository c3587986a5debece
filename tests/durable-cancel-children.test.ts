import { describe, expect, it } from 'vitest';
import { waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';
import { stopAfterEach, submitTask } from './helpers/tasks.js';

// Issue 40, items 3 and 4: a durable parent's cancel reaches every child, whether the parent is
// still making them or waits on them, and no child's handler starts once the cancel was received.
// The real API in this process, a real worker process running the stock `durable` type whose
// children are `sleep` tasks (60 s: they run until cancelled), the real Redis.

const started = stopAfterEach();

async function setUp(concurrency: number): Promise<{ a: InProcessApi; w: Proc }> {
  const a = started.api(await startInProcessApi());
  const w = started.proc(
    await startWorker(a.prefix, { LONGRUN_WORKER_CONCURRENCY: String(concurrency) }),
  );
  return { a, w };
}

const submit = submitTask;

/** The worker's `task started` lines for `type` (one per handler run): task id and time. */
function starts(w: Proc, type: string): { taskId: string; time: number }[] {
  const out: { taskId: string; time: number }[] = [];
  for (const line of w.lines) {
    if (!line.includes('"msg":"task started"')) continue;
    const entry = JSON.parse(line) as { taskId: string; type: string; time: number };
    if (entry.type === type) out.push({ taskId: entry.taskId, time: entry.time });
  }
  return out;
}

/** Every `sleep` task of the tenant (the children: the test submits no other). */
async function sleepTasks(a: InProcessApi): Promise<{ taskId: string; status: string }[]> {
  const all: { taskId: string; status: string }[] = [];
  let cursor: string | undefined;
  for (;;) {
    const q = `/v1/jobs?type=sleep&limit=100${cursor ? `&cursor=${cursor}` : ''}`;
    const res = await a.http('GET', q);
    expect(res.status, res.text).toBe(200);
    all.push(...(res.body.tasks as { taskId: string; status: string }[]));
    cursor = res.body.nextCursor ?? undefined;
    if (!cursor) return all;
  }
}

const open = (tasks: { status: string }[]) =>
  tasks.filter((t) => t.status === 'working' || t.status === 'input_required');

describe('durable tasks: a parent cancel reaches its children', () => {
  it('cancelled 300 ms after submit while making 1 000 children: none left running or queued, none starts after the cancel', async () => {
    const { a, w } = await setUp(8);
    const id = await submit(a, {
      type: 'durable',
      input: { children: 1000, childSleepMs: 60_000 },
    });
    await new Promise((r) => setTimeout(r, 300));
    // On a busy host the parent may not have started by then: it is cancelled while making them.
    await waitFor(async () => ((await sleepTasks(a)).length > 0 ? true : undefined), {
      timeoutMs: 20_000,
      intervalMs: 20,
      what: 'the first child',
    });
    const cancelSent = Date.now();
    const res = await a.http('POST', `/v1/jobs/${id}/cancel`);
    expect(res.status, res.text).toBe(200);
    const answered = Date.now();
    // When the cancel was written: a child that read its parent before it may start until then.
    const cancelledAt = Date.parse(res.body.updatedAt as string);
    // Within 5 s of the answer no child is queued or working, and it stays so.
    await waitFor(async () => (open(await sleepTasks(a)).length === 0 ? true : undefined), {
      timeoutMs: 5_000,
      intervalMs: 200,
      what: 'no child queued or working',
    });
    expect(Date.now() - answered).toBeLessThan(5_000 + 2_000);
    // The parent knows every child it made (a later cancel or read finds them all), once its run
    // has stopped making them; meanwhile none is open at any poll.
    const children = await waitFor(
      async () => {
        const made = await sleepTasks(a);
        expect(open(made)).toEqual([]);
        const parent = (await a.http('GET', `/v1/jobs/${id}`)).body;
        expect(parent.status).toBe('cancelled');
        const known = new Set(parent.childTaskIds ?? []);
        return made.length === known.size && made.every((c) => known.has(c.taskId))
          ? made
          : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 250, what: 'the parent to list every child made' },
    );
    expect(children.length).toBeGreaterThan(0);
    expect(new Set(children.map((c) => c.status))).toEqual(new Set(['cancelled']));
    const late = starts(w, 'sleep').filter((s) => s.time > cancelledAt);
    expect(late, `child handlers started after the cancel (${cancelSent}, ${cancelledAt})`).toEqual(
      [],
    );
  }, 60_000);

  it('cancelling a parent waiting on 200 children starts none of its queued children', async () => {
    const { a, w } = await setUp(8);
    const id = await submit(a, { type: 'durable', input: { children: 200, childSleepMs: 60_000 } });
    const waiting = await waitFor(
      async () => {
        const h = (await a.http('GET', `/v1/jobs/${id}`)).body;
        return String(h.statusMessage).startsWith('waiting for') ? h : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'the parent waiting on its children' },
    );
    expect(waiting.childTaskIds).toHaveLength(200);
    // The worker's slots are all taken by children (7 or 8: the parent may still hold one).
    await waitFor(async () => (starts(w, 'sleep').length >= 7 ? true : undefined), {
      timeoutMs: 20_000,
      what: 'children running',
    });
    const cancelSent = Date.now();
    const res = await a.http('POST', `/v1/jobs/${id}/cancel`);
    expect(res.status, res.text).toBe(200);
    await waitFor(async () => (open(await sleepTasks(a)).length === 0 ? true : undefined), {
      timeoutMs: 5_000,
      intervalMs: 200,
      what: 'no child queued or working',
    });
    await new Promise((r) => setTimeout(r, 1000));
    const late = starts(w, 'sleep').filter((s) => s.time > cancelSent);
    expect(late, 'child handlers started after the cancel').toEqual([]);
    expect(open(await sleepTasks(a))).toEqual([]);
  }, 60_000);

  it("a child made by a worker killed before listing it does not run, and the parent's cancel ends it", async () => {
    const a = started.api(await startInProcessApi());
    // The parent's worker kills itself right after making the first child, before listing it;
    // its lock (30 s) keeps the parent from being run again during the test.
    const maker = await startWorker(a.prefix, {
      LONGRUN_WORKER_TYPES: 'durable',
      LONGRUN_TEST_CRASH_AT: 'after-child',
    });
    started.proc(maker);
    const runner = await startWorker(a.prefix, { LONGRUN_WORKER_TYPES: 'sleep' });
    started.proc(runner);
    const id = await submit(a, { type: 'durable', input: { children: 3, childSleepMs: 60_000 } });
    const [child] = await waitFor(
      async () => {
        const made = await sleepTasks(a);
        return made.length > 0 ? made : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50, what: 'the first child' },
    );
    await waitFor(
      async () => (maker.child.exitCode !== null || maker.child.signalCode ? true : undefined),
      {
        timeoutMs: 10_000,
        what: 'the maker killed',
      },
    );
    // The other worker is offered the child meanwhile: unlisted on its working parent, it waits.
    await new Promise((r) => setTimeout(r, 1500));
    expect(starts(runner, 'sleep')).toEqual([]);
    const res = await a.http('POST', `/v1/jobs/${id}/cancel`);
    expect(res.status, res.text).toBe(200);
    // Its next offer finds the parent cancelled: the child is cancelled, never run.
    const ended = await waitFor(
      async () => {
        const h = (await a.http('GET', `/v1/jobs/${child!.taskId}`)).body;
        return h.status === 'cancelled' ? h : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'the unlisted child cancelled' },
    );
    expect(ended.parentTaskId).toBe(id);
    expect(starts(runner, 'sleep')).toEqual([]);
  }, 60_000);
});
