// Reliability: durable tasks keep their promises under worker crashes (issue 40).
// Waitpoints completed around their timeouts: `order` tasks (tests/fixtures/durable-worker.mjs)
// wait on a waitpoint of 1-2.5 s; each gets a completion posted at a random moment from 400 ms
// before its expiresAt to 400 ms after, while a worker is SIGKILLed every few seconds. Every
// task ends completed with exactly one of the two outcomes, and the one its completion was told:
// a `200` means the handler shipped (never cancelled), a `409 waitpoint-timed-out` means it
// cancelled (never shipped).
// (Parents cancelled while they make children, under the same kind of kills: the scenario of
// durable-cancel-children.chaos.ts.)
// Sizes: CHAOS_SCALE, or CHAOS_DURABLE_PROMISES_TASKS; CHAOS_CRASH_KILL_EVERY_MS (2000).
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startScript } from '../helpers/processes.js';
import { KEY_A, startInProcessApi } from '../helpers/service.js';
import {
  Cleanups,
  closeBooks,
  keepAliveAgent,
  killedWorkers,
  pool,
  rawRequest,
  recordKey,
  report,
  scaled,
  secondsSince,
  summary,
  Tally,
} from './helpers.js';

const TASKS = scaled('DURABLE_PROMISES_TASKS', 200, 20);
const KILL_EVERY_MS = Number(process.env.CHAOS_CRASH_KILL_EVERY_MS ?? 2000);
const WORKER_ENV = {
  LONGRUN_LOCK_DURATION_MS: '1000',
  LONGRUN_STALLED_INTERVAL_MS: '500',
  LONGRUN_MAX_STALLED_COUNT: '20',
  LONGRUN_WORKER_CONCURRENCY: '16',
};
const root = resolve(import.meta.dirname, '../..');

const cleanups = new Cleanups();
afterAll(() => cleanups.run());

describe('durable tasks keep their promises under worker crashes', () => {
  it(`${TASKS} waitpoints completed around their timeouts: one outcome each, the one the caller was told`, async () => {
    const started = performance.now();
    const api = await startInProcessApi();
    cleanups.add(() => api.close());
    const redis = new Redis(inject('redisUrl'));
    cleanups.add(() => redis.quit());
    const env = { REDIS_URL: inject('redisUrl'), LONGRUN_PREFIX: api.prefix, ...WORKER_ENV };
    const fleet = await killedWorkers(cleanups, KILL_EVERY_MS, () =>
      startScript('tests/fixtures/durable-worker.mjs', env, { cwd: root, timeoutMs: 20_000 }),
    );

    const agent = keepAliveAgent(cleanups, 16);
    const submits = new Tally();
    const posts = new Tally();
    const told = new Map<string, number>();
    await pool(
      Array.from({ length: TASKS }, (_, i) => i),
      16,
      async (i) => {
        const res = await rawRequest(api.url, {
          method: 'POST',
          path: '/v1/jobs',
          key: KEY_A,
          body: { type: 'order', input: { timeoutMs: 1000 + ((i * 53) % 1500), sleepMs: 200 } },
          agent,
        });
        submits.add(res.status);
        if (res.status !== 202) return;
        const id = res.body.taskId as string;
        // The waitpoint as its step recorded it (made by the task's first run).
        let made: string | null = null;
        for (let tries = 0; !made && tries < 600; tries++) {
          made = await redis.hget(recordKey(api.prefix, id), 'st:$waitpoint:1');
          if (!made) await sleep(50);
        }
        if (!made) return;
        const { expiresAt } = JSON.parse(made) as { expiresAt: number };
        const offset = ((i * 97) % 800) - 400;
        await sleep(Math.max(0, expiresAt + offset - Date.now()));
        const post = await rawRequest(api.url, {
          method: 'POST',
          path: `/v1/waitpoints/${id}.1`,
          key: KEY_A,
          body: { data: { paid: i + 1 } },
          agent,
        });
        posts.add(post.status);
        told.set(id, post.status);
      },
    );
    const ids = [...told.keys()];
    const books = await closeBooks(redis, api.prefix, ids, { timeoutMs: 300_000 });
    const kills = await fleet.stop();

    let bothOutcomes = 0;
    let notAsTold = 0;
    for (const id of ids) {
      const res = await rawRequest(api.url, { method: 'GET', path: `/v1/jobs/${id}`, key: KEY_A });
      const names = new Set(((res.body.steps ?? []) as { name: string }[]).map((s) => s.name));
      const shipped = names.has('ship-order');
      const cancelled = names.has('cancel-order');
      if (shipped && cancelled) bothOutcomes++;
      const status = told.get(id);
      if ((status === 200 && !shipped) || (status === 409 && !cancelled)) notAsTold++;
    }
    report('durable-waitpoints', {
      tasks: TASKS,
      killEveryMs: KILL_EVERY_MS,
      kills,
      submits: submits.counts,
      posts: posts.counts,
      ...summary(books),
      bothOutcomes,
      notAsTold,
      seconds: secondsSince(started),
    });
    expect(submits.counts).toEqual({ 202: TASKS });
    expect(ids).toHaveLength(TASKS);
    expect(kills).toBeGreaterThan(0);
    expect(Object.keys(posts.counts).sort()).toEqual(expect.arrayContaining(['200', '409']));
    expect(books.lost).toBe(0);
    expect(books.unfinished, `unfinished: ${books.unfinishedIds.slice(0, 5).join(', ')}`).toBe(0);
    expect(books.completed).toBe(TASKS);
    expect(books.terminalTwice).toBe(0);
    expect(bothOutcomes).toBe(0);
    expect(notAsTold).toBe(0);
  });
});
