import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Redis } from 'ioredis';
import {
  createRedis,
  describeJobType,
  JobTypeRegistry,
  QUEUE_NAME,
  type JobTypeDescriptor,
} from '@longrun/engine/internal';
import { createWorker, defineJobType, type LongrunWorker } from '@longrun/worker';
import { catalog as stockCatalog } from '@longrun/worker-app';
import { waitFor } from './helpers/http.js';
import { oneShard, startInProcessApi, workerRedis, type InProcessApi } from './helpers/service.js';

// Issue 27, item 6: a team's worker beside the stock one, on one Redis and prefix. No task may
// fail because a worker that does not serve its type picked its job up; a job that still
// reaches such a worker is given back with its attempts untouched. The upgrade case counts the
// legacy shared queue's jobs on one shard.
oneShard();

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
});

/** A type of the team's service: it says which attempt ran it. */
function teamJob(name: string, queue?: string) {
  return defineJobType({
    name,
    input: z.object({ n: z.number() }),
    ...(queue ? { queue } : {}),
    attempts: 3,
    handler: (input, ctx) => ({ n: input.n, attempt: ctx.attempt, by: name }),
  });
}

async function api(): Promise<InProcessApi> {
  const a = await startInProcessApi({ register: false });
  cleanup.push(() => a.close());
  return a;
}

async function worker(
  prefix: string,
  jobs: Parameters<typeof createWorker>[0]['jobs'],
): Promise<LongrunWorker> {
  const w = createWorker({
    ...workerRedis(),
    prefix,
    jobs,
    concurrency: 4,
    logger: pino({ level: process.env.DEBUG_ROUTING ? 'debug' : 'silent' }),
    webhooks: false,
    reconcile: false,
  });
  await w.start();
  cleanup.push(() => w.close());
  return w;
}

/** Submits once the API knows the type (a worker's registration may not be read yet). */
async function submit(a: InProcessApi, type: string, input: unknown): Promise<string> {
  const res = await waitFor(
    async () => {
      const r = await a.http('POST', '/v1/jobs', { body: { type, input } });
      return r.status === 400 && r.body.errors?.[0]?.path === 'type' ? undefined : r;
    },
    { what: `a ${type} submit answered` },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.taskId as string;
}

/** Waits until every task is terminal and returns their handles. */
async function settled(a: InProcessApi, ids: string[]): Promise<Record<string, unknown>[]> {
  const terminal = new Set(['completed', 'failed', 'cancelled']);
  return waitFor(
    async () => {
      const handles = await Promise.all(
        ids.map(async (id) => (await a.http('GET', `/v1/jobs/${id}`)).body),
      );
      return handles.every((h) => terminal.has(h.status)) ? handles : undefined;
    },
    { what: 'every task finished', timeoutMs: 80_000 },
  );
}

/** Every task completed by its own type's handler, on its first attempt (none given back twice). */
function expectAllCompletedFirstAttempt(handles: Record<string, unknown>[], type: string): void {
  for (const h of handles) {
    expect(h.status, JSON.stringify(h)).toBe('completed');
    expect(h.result).toMatchObject({ by: type, attempt: 1 });
  }
}

describe('a worker never fails a task of a type it does not serve', () => {
  it('the stock worker and a team worker with a type without a queue, on one prefix', async () => {
    const a = await api();
    const team = teamJob('team-report');
    await worker(a.prefix, stockCatalog);
    await worker(a.prefix, [team]);
    const reports: string[] = [];
    const echoes: string[] = [];
    for (let n = 0; n < 8; n++) {
      reports.push(await submit(a, 'team-report', { n }));
      echoes.push(await submit(a, 'echo', { n }));
    }
    expectAllCompletedFirstAttempt(await settled(a, reports), 'team-report');
    for (const h of await settled(a, echoes)) expect(h.status).toBe('completed');
    // Each type has its own queue, which the Prometheus queue depth still counts.
    const metrics = (await a.http('GET', '/metrics')).text;
    expect(metrics).toMatch(/longrun_queue_jobs\{queue="tasks\.team-report",state="waiting"/);
    expect(metrics).toMatch(/longrun_queue_jobs\{queue="tasks\.echo",state="waiting"/);
  });

  it('two services naming one queue: each gives back the other one’s jobs untouched', async () => {
    const a = await api();
    const left = teamJob('left-type', 'shared');
    const right = teamJob('right-type', 'shared');
    await worker(a.prefix, [left]);
    await worker(a.prefix, [right]);
    const lefts: string[] = [];
    const rights: string[] = [];
    for (let n = 0; n < 8; n++) {
      lefts.push(await submit(a, 'left-type', { n }));
      rights.push(await submit(a, 'right-type', { n }));
    }
    expectAllCompletedFirstAttempt(await settled(a, lefts), 'left-type');
    expectAllCompletedFirstAttempt(await settled(a, rights), 'right-type');
  }, 90_000);

  it('upgrade: jobs an older version left in the shared tasks queue still run on the worker serving them', async () => {
    const a = await api();
    const team = teamJob('legacy-report');
    await worker(a.prefix, stockCatalog);
    await worker(a.prefix, [team]);
    const redis: Redis = createRedis(workerRedis().redisUrl, 'worker', workerRedis());
    cleanup.push(async () => redis.disconnect());
    // An older worker of the type, as the registry holds it: no queue name announced, so its
    // jobs go where that version listened (the shared `tasks` queue), as an older API put them.
    const { queueName: _, ...old } = describeJobType(team) as JobTypeDescriptor & {
      queueName?: string;
    };
    await new JobTypeRegistry(redis, a.prefix).publish(
      'old-worker',
      [{ ...old, version: 'old0000000000000' }],
      3_600_000,
    );
    await a.types.refresh();
    const ids: string[] = [];
    for (let n = 0; n < 8; n++) ids.push(await submit(a, 'legacy-report', { n }));
    // They go to the shared queue, as an older API would have put them.
    expect(a.tasks.queueFor('legacy-report').name).toBe(QUEUE_NAME);
    expectAllCompletedFirstAttempt(await settled(a, ids), 'legacy-report');
  }, 90_000);

  it('a process runs at most its concurrency at once, over all the queues of the types it serves', async () => {
    const a = await api();
    let running = 0;
    let most = 0;
    const slowType = (name: string) =>
      defineJobType({
        name,
        input: z.object({ n: z.number() }),
        handler: async (input) => {
          running += 1;
          most = Math.max(most, running);
          await new Promise((r) => setTimeout(r, 150));
          running -= 1;
          return { n: input.n };
        },
      });
    const types = ['gate-a', 'gate-b', 'gate-c'];
    const w = createWorker({
      ...workerRedis(),
      prefix: a.prefix,
      jobs: types.map(slowType),
      concurrency: 2,
      logger: pino({ level: 'silent' }),
      webhooks: false,
      reconcile: false,
    });
    await w.start();
    cleanup.push(() => w.close());
    // Three queues of their own (and the shared one), each a BullMQ worker of concurrency 2.
    expect(w.queueNames.length).toBeGreaterThanOrEqual(3);
    const ids: string[] = [];
    for (let n = 0; n < 4; n++) for (const t of types) ids.push(await submit(a, t, { n }));
    for (const h of await settled(a, ids)) expect(h.status).toBe('completed');
    expect(most).toBeGreaterThanOrEqual(2);
    expect(most).toBeLessThanOrEqual(2);
  }, 90_000);
});
