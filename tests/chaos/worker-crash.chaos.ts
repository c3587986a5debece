// Reliability 2: worker crashes. Two worker processes drain 2 000 jobs (echo and short sleeps)
// while one of them is SIGKILLed every few seconds and restarted. Every accepted task completes,
// exactly one terminal transition each; duplicate executions (at-least-once) are counted and reported.
// Sizes: CHAOS_SCALE, or CHAOS_CRASH_JOBS; CHAOS_CRASH_KILL_EVERY_MS (default 2000).
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Proc } from '../helpers/processes.js';
import { KEY_A, startInProcessApi, startWorker } from '../helpers/service.js';
import {
  Cleanups,
  keepAliveAgent,
  closeBooks,
  historyOf,
  pool,
  rawRequest,
  report,
  scaled,
  secondsSince,
  summary,
  Tally,
  COUNT_RUNS,
} from './helpers.js';

const JOBS = scaled('CRASH_JOBS', 2000, 200);
const KILL_EVERY_MS = Number(process.env.CHAOS_CRASH_KILL_EVERY_MS ?? 2000);
const WORKER_ENV = {
  ...COUNT_RUNS,
  LONGRUN_LOCK_DURATION_MS: '1000',
  LONGRUN_STALLED_INTERVAL_MS: '500',
  LONGRUN_MAX_STALLED_COUNT: '10',
  LONGRUN_WORKER_CONCURRENCY: '16',
};

const cleanups = new Cleanups();
afterAll(() => cleanups.run());

describe('worker crash', () => {
  it(`SIGKILL a worker every ${KILL_EVERY_MS} ms during ${JOBS} jobs: all complete, none twice`, async () => {
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
    const sleeps = new Set<string>();
    await pool(
      Array.from({ length: JOBS }, (_, i) => i),
      16,
      async (i) => {
        const body =
          i % 3 === 0
            ? { type: 'sleep', input: { ms: 100 + ((i * 37) % 400) } }
            : { type: 'echo', input: { i } };
        const res = await rawRequest(api.url, {
          method: 'POST',
          path: '/v1/jobs',
          key: KEY_A,
          body,
          agent,
        });
        submits.add(res.status);
        if (res.status === 202) {
          accepted.push(res.body.taskId);
          if (body.type === 'sleep') sleeps.add(res.body.taskId);
        }
      },
    );

    const books = await closeBooks(redis, api.prefix, accepted, { timeoutMs: 300_000 });
    stop = true;
    await killer;

    // Which kind of job ran twice: sleeps are the ones likely to be mid-run when a worker dies.
    const duplicatedSleeps = (await readRunCounts(redis, api.prefix, [...sleeps])).filter(
      (n) => n > 1,
    ).length;
    report('worker-crash', {
      jobs: JOBS,
      killEveryMs: KILL_EVERY_MS,
      kills,
      submits: submits.counts,
      ...summary(books),
      duplicatedSleeps,
      duplicatedEchoes: books.duplicated - duplicatedSleeps,
      seconds: secondsSince(started),
    });

    expect(submits.counts).toEqual({ 202: JOBS });
    expect(kills).toBeGreaterThan(0);
    expect(books.lost).toBe(0);
    expect(books.unfinished, `unfinished: ${books.unfinishedIds.slice(0, 5).join(', ')}`).toBe(0);
    expect(books.failed).toBe(0);
    expect(books.completed).toBe(JOBS);
    expect(books.terminalTwice).toBe(0);
    expect(books.unacknowledged).toBe(0);
  });
});

/** Handler starts per task (`running` events in its history). */
async function readRunCounts(redis: Redis, prefix: string, ids: string[]): Promise<number[]> {
  const histories = await Promise.all(ids.map((id) => historyOf(redis, prefix, id)));
  return histories.map((events) => events.filter((event) => event.m === 'running').length);
}
