// Reliability: durable tasks under worker crashes (issue 29). Two worker processes run durable
// tasks of five steps each (one step of each task holds a few hundred ms, some tasks sleep
// between their steps) while one worker is SIGKILLed every few seconds and restarted. Every task
// completes, with exactly one terminal transition, and no finished step runs again: each step
// reports `s<k> running` as it starts, and none of those comes after the step's
// `step s<k> completed` event in the task's history.
// Sizes: CHAOS_SCALE, or CHAOS_DURABLE_CRASH_TASKS; CHAOS_CRASH_KILL_EVERY_MS (default 2000).
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Proc } from '../helpers/processes.js';
import { KEY_A, startInProcessApi, startWorker } from '../helpers/service.js';
import {
  Cleanups,
  closeBooks,
  historyOf,
  keepAliveAgent,
  pool,
  rawRequest,
  report,
  scaled,
  secondsSince,
  summary,
  Tally,
} from './helpers.js';

const TASKS = scaled('DURABLE_CRASH_TASKS', 300, 30);
const STEPS = 5;
const KILL_EVERY_MS = Number(process.env.CHAOS_CRASH_KILL_EVERY_MS ?? 2000);
const WORKER_ENV = {
  LONGRUN_LOCK_DURATION_MS: '1000',
  LONGRUN_STALLED_INTERVAL_MS: '500',
  LONGRUN_MAX_STALLED_COUNT: '20',
  LONGRUN_WORKER_CONCURRENCY: '16',
};

const cleanups = new Cleanups();
afterAll(() => cleanups.run());

describe('durable tasks under worker crashes', () => {
  it(`SIGKILL a worker every ${KILL_EVERY_MS} ms during ${TASKS} step-heavy tasks: all end once, no finished step twice`, async () => {
    const started = performance.now();
    const api = await startInProcessApi();
    cleanups.add(() => api.close());
    const redis = new Redis(inject('redisUrl'));
    cleanups.add(() => redis.quit());

    const workers: Proc[] = [];
    for (let i = 0; i < 2; i++) workers.push(await startWorker(api.prefix, WORKER_ENV));
    cleanups.add(() => Promise.allSettled(workers.map((w) => w.kill())));

    let stop = false;
    let kills = 0;
    const killer = (async () => {
      await sleep(KILL_EVERY_MS / 2);
      for (let slot = 0; !stop; slot = 1 - slot) {
        await workers[slot]!.kill();
        kills += 1;
        workers[slot] = await startWorker(api.prefix, WORKER_ENV);
        await sleep(KILL_EVERY_MS);
      }
    })();

    const agent = keepAliveAgent(cleanups, 16);
    const submits = new Tally();
    const accepted: string[] = [];
    await pool(
      Array.from({ length: TASKS }, (_, i) => i),
      16,
      async (i) => {
        const input = {
          steps: STEPS,
          holdStep: (i % STEPS) + 1,
          holdMs: 400 + ((i * 37) % 800),
          ...(i % 4 === 0 ? { sleepMs: 300 } : {}),
        };
        const res = await rawRequest(api.url, {
          method: 'POST',
          path: '/v1/jobs',
          key: KEY_A,
          body: { type: 'durable', input },
          agent,
        });
        submits.add(res.status);
        if (res.status === 202) accepted.push(res.body.taskId);
      },
    );

    const books = await closeBooks(redis, api.prefix, accepted, { timeoutMs: 300_000 });
    stop = true;
    await killer;

    let stepsRerunAfterFinish = 0;
    let stepsRecordedTwice = 0;
    let interruptedReruns = 0;
    for (const id of accepted) {
      const history = (await historyOf(redis, api.prefix, id)).map((e) => e.m);
      for (let k = 1; k <= STEPS; k++) {
        const done = history.indexOf(`step s${k} completed`);
        if (history.filter((m) => m === `step s${k} completed`).length !== 1) stepsRecordedTwice++;
        const runs = history.filter((m) => m === `s${k} running`).length;
        interruptedReruns += Math.max(0, runs - 1);
        if (done >= 0 && history.slice(done + 1).includes(`s${k} running`)) stepsRerunAfterFinish++;
      }
    }
    report('durable-crash', {
      tasks: TASKS,
      killEveryMs: KILL_EVERY_MS,
      kills,
      submits: submits.counts,
      ...summary(books),
      interruptedReruns,
      stepsRerunAfterFinish,
      stepsRecordedTwice,
      seconds: secondsSince(started),
    });

    expect(submits.counts).toEqual({ 202: TASKS });
    expect(kills).toBeGreaterThan(0);
    expect(books.lost).toBe(0);
    expect(books.unfinished, `unfinished: ${books.unfinishedIds.slice(0, 5).join(', ')}`).toBe(0);
    expect(books.failed).toBe(0);
    expect(books.completed).toBe(TASKS);
    expect(books.terminalTwice).toBe(0);
    expect(stepsRecordedTwice).toBe(0);
    expect(stepsRerunAfterFinish).toBe(0);
  });
});
