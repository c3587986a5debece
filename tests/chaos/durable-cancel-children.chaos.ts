// Reliability: durable parents cancelled while they make their children, under worker crashes
// (issue 40, items 3 and 4). Two worker processes run parents of the stock `durable` type, each
// making 200 `sleep` children (60 s: they run until cancelled), while one worker is SIGKILLed
// every few seconds and restarted. Each parent is cancelled 50-650 ms after its submit, while it
// makes its children. At the end no child is queued or working, every child is cancelled and
// none of the parents completed. (A child whose maker was killed before listing it stays
// unlisted when its parent is cancelled before its run is recovered: it is counted, `unlisted`;
// it never ran, its own run cancelled it.)
// Sizes: CHAOS_SCALE, or CHAOS_DURABLE_CANCEL_PARENTS; CHAOS_CANCEL_KILL_EVERY_MS (default 1000).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { KEY_A, startInProcessApi, startWorker } from '../helpers/service.js';
import {
  Cleanups,
  keepAliveAgent,
  killedWorkers,
  pool,
  rawRequest,
  report,
  scaled,
  secondsSince,
  Tally,
} from './helpers.js';

const PARENTS = scaled('DURABLE_CANCEL_PARENTS', 40, 6);
const CHILDREN = 200;
const KILL_EVERY_MS = Number(process.env.CHAOS_CANCEL_KILL_EVERY_MS ?? 1000);
const WORKER_ENV = {
  LONGRUN_LOCK_DURATION_MS: '1000',
  LONGRUN_STALLED_INTERVAL_MS: '500',
  LONGRUN_MAX_STALLED_COUNT: '20',
  LONGRUN_WORKER_CONCURRENCY: '16',
};

const cleanups = new Cleanups();
afterAll(() => cleanups.run());

describe('durable parents cancelled while making children, under worker crashes', () => {
  it(`SIGKILL a worker every ${KILL_EVERY_MS} ms while ${PARENTS} parents of ${CHILDREN} children are cancelled: no child left running`, async () => {
    const started = performance.now();
    const api = await startInProcessApi();
    cleanups.add(() => api.close());
    const fleet = await killedWorkers(cleanups, KILL_EVERY_MS, () =>
      startWorker(api.prefix, WORKER_ENV),
    );

    const agent = keepAliveAgent(cleanups, 16);
    const call = (method: string, path: string, body?: unknown) =>
      rawRequest(api.url, { method, path, key: KEY_A, agent, ...(body ? { body } : {}) });
    const submits = new Tally();
    const cancels = new Tally();
    const parents: string[] = [];
    await pool(
      Array.from({ length: PARENTS }, (_, i) => i),
      2,
      async (i) => {
        const res = await call('POST', '/v1/jobs', {
          type: 'durable',
          input: { children: CHILDREN, childSleepMs: 60_000 },
        });
        submits.add(res.status);
        if (res.status !== 202) return;
        parents.push(res.body.taskId);
        await sleep(50 + ((i * 97) % 600));
        cancels.add((await call('POST', `/v1/jobs/${res.body.taskId}/cancel`)).status);
      },
    );
    const kills = await fleet.stop();

    // Killed workers' jobs come back within a few seconds (1 s locks): then none is open.
    const open = async () => {
      let n = 0;
      for (const status of ['working', 'input_required']) {
        const res = await call('GET', `/v1/jobs?type=sleep&status=${status}&limit=100`);
        expect(res.status, res.text).toBe(200);
        n += (res.body.tasks as unknown[]).length;
      }
      return n;
    };
    const deadline = Date.now() + 60_000;
    let left = await open();
    while (left > 0 && Date.now() < deadline) {
      await sleep(500);
      left = await open();
    }

    const children: { taskId: string; status: string; parentTaskId?: string }[] = [];
    for (let cursor: string | undefined, first = true; first || cursor; first = false) {
      const res = await call(
        'GET',
        `/v1/jobs?type=sleep&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      );
      children.push(...res.body.tasks);
      cursor = res.body.nextCursor ?? undefined;
    }
    const listed = new Set<string>();
    const parentStatus = new Tally();
    for (const id of parents) {
      const h = (await call('GET', `/v1/jobs/${id}`)).body;
      parentStatus.add(h.status);
      for (const c of (h.childTaskIds ?? []) as string[]) listed.add(c);
    }
    const statuses = new Tally();
    for (const c of children) statuses.add(c.status);
    const unlisted = children.filter((c) => !listed.has(c.taskId)).length;
    report('durable-cancel-children', {
      parents: PARENTS,
      children: children.length,
      killEveryMs: KILL_EVERY_MS,
      kills,
      submits: submits.counts,
      cancels: cancels.counts,
      parentStatus: parentStatus.counts,
      childStatus: statuses.counts,
      openAtEnd: left,
      unlisted,
      seconds: secondsSince(started),
    });

    expect(submits.counts).toEqual({ 202: PARENTS });
    expect(kills).toBeGreaterThan(0);
    expect(left).toBe(0);
    expect(statuses.keys().filter((s) => s !== 'cancelled')).toEqual([]);
    expect(parentStatus.get('completed')).toBe(0);
  });
});
