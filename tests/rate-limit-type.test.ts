// A job type that calls a rate-limited service declares `rateLimit: {max, durationMs}`: BullMQ's
// limiter on the type's queue, shared by every worker (issue 16).
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { z } from 'zod';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createWorker, defineJobType, type LongrunWorker } from '@longrun/worker';
import { waitFor } from './helpers/http.js';
import { startInProcessApi, type InProcessApi, workerRedis } from './helpers/service.js';

const MAX = 2;
const WINDOW_MS = 1000;
const TASKS = 8;

let api: InProcessApi;
const workers: LongrunWorker[] = [];
const redis = new Redis(inject('redisUrl'));
const startsKey = () => `${api.prefix}:test:starts`;

const callApiJob = defineJobType({
  name: 'call-api',
  input: z.object({ n: z.int() }),
  queue: 'partner-api',
  rateLimit: { max: MAX, durationMs: WINDOW_MS },
  handler: async ({ n }) => {
    await redis.rpush(startsKey(), String(Date.now()));
    return { n };
  },
});

beforeAll(async () => {
  api = await startInProcessApi({ register: false });
  // Two workers, each free to run 8 at once: only the shared limiter holds them back.
  for (let i = 0; i < 2; i++) {
    const w = createWorker({
      ...workerRedis(),
      prefix: api.prefix,
      jobs: [callApiJob],
      concurrency: 8,
      logger: pino({ level: 'silent' }),
      webhooks: false,
      reconcile: false,
    });
    await w.start();
    workers.push(w);
  }
});
afterAll(async () => {
  for (const w of workers) await w.close();
  await api?.close();
  redis.disconnect();
});

it('runs no more than max per window across two workers; a fresh handle says queued, not rate-limited', async () => {
  const ids: string[] = [];
  for (let n = 0; n < TASKS; n++) {
    const res = await waitFor(
      async () => {
        const r = await api.http('POST', '/v1/jobs', { body: { type: 'call-api', input: { n } } });
        return r.status === 202 ? r : undefined;
      },
      { what: 'a call-api task accepted' },
    );
    ids.push(res.body.taskId as string);
    // Nothing was held back at submit time (the limiter acts when a worker takes the job): the
    // handle says what is true (issue 27).
    expect(res.body.statusMessage).toBe('queued');
  }
  for (const id of ids) {
    await waitFor(
      async () =>
        (await api.http('GET', `/v1/jobs/${id}`)).body.status === 'completed' ? true : undefined,
      { what: `task ${id} completed`, timeoutMs: 20_000 },
    );
  }
  const starts = (await redis.lrange(startsKey(), 0, -1)).map(Number).sort((a, b) => a - b);
  expect(starts).toHaveLength(TASKS);
  // In any window of WINDOW_MS, at most MAX starts. The times are the handlers' starts, which
  // follow the limiter's (in Redis) by however long a loaded host takes to run them: 100 ms of
  // slack (a limiter letting a third job through would be a whole window early).
  for (let i = 0; i + MAX < starts.length; i++) {
    expect(starts[i + MAX]! - starts[i]!, starts.join(',')).toBeGreaterThanOrEqual(WINDOW_MS - 100);
  }
  // The type's limit is listed with it.
  const types = (await api.http('GET', '/v1/job-types')).body.jobTypes as Record<string, unknown>[];
  expect(types.find((t) => t.name === 'call-api')).toMatchObject({
    rateLimit: { max: MAX, durationMs: WINDOW_MS },
  });
});

it('refuses a rate limit on a type without a queue of its own', () => {
  const shared = defineJobType({
    name: 'shared',
    input: z.object({}),
    rateLimit: { max: 1, durationMs: 1000 },
    handler: () => null,
  });
  expect(() => createWorker({ ...workerRedis(), jobs: [shared] })).toThrow(
    /rateLimit.*queue of its own/,
  );
});

it("refuses a job type's timeoutMs a Node timer cannot wait (it would fire at once)", () => {
  const forever = defineJobType({
    name: 'forever',
    input: z.object({}),
    timeoutMs: 30 * 86_400_000,
    handler: () => null,
  });
  expect(() => createWorker({ ...workerRedis(), jobs: [forever] })).toThrow(
    /forever\.timeoutMs must be an integer from 100 to 2147483647/,
  );
});
