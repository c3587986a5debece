// Fair share of the workers between tenants (issue 13, decision 33): a tenant's task is not
// stuck behind another tenant's backlog. Real API, real Redis, a real SDK worker started only
// once the tasks are queued, so the order the queue hands them out is the order they run in.
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { z } from 'zod';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createCatalog } from '@longrun/core';
import { createWorker, defineJobType, type LongrunWorker } from '@longrun/worker';
import { waitFor } from './helpers/http.js';
import {
  KEY_B,
  startInProcessApi,
  uniquePrefix,
  type InProcessApi,
  oneShard,
  workerRedis,
} from './helpers/service.js';

// This file asserts the order of one queue (fair-share turns, priorities).
oneShard();

const redis = new Redis(inject('redisUrl'));
let api: InProcessApi | undefined;
let worker: LongrunWorker | undefined;

afterEach(async () => {
  await worker?.close();
  await api?.close();
  worker = api = undefined;
});

/** Appends `<who>:<n>` to a list as it runs: the order the queue handed the jobs out. */
function orderJob(prefix: string) {
  return defineJobType({
    name: 'mark',
    input: z.object({ who: z.string(), n: z.int(), ms: z.int().default(0) }),
    handler: async ({ who, n, ms }) => {
      await redis.rpush(`${prefix}:test:order`, `${who}:${n}`);
      if (ms) await new Promise((r) => setTimeout(r, ms));
      return { n };
    },
  });
}

/** The API with the `mark` type registered (no worker takes jobs yet). */
async function start(opts: Parameters<typeof startInProcessApi>[0] = {}): Promise<InProcessApi> {
  const prefix = uniquePrefix();
  api = await startInProcessApi({
    prefix,
    register: createCatalog([orderJob(prefix)]),
    ...opts,
  });
  return api;
}

async function runWorker(prefix: string, concurrency: number): Promise<void> {
  worker = createWorker({
    ...workerRedis(),
    prefix,
    jobs: [orderJob(prefix)],
    concurrency,
    logger: pino({ level: 'silent' }),
    webhooks: false,
  });
  await worker.start();
}

async function submitMany(
  service: InProcessApi,
  tenant: 'alpha' | 'beta',
  from: number,
  count: number,
  ms = 0,
): Promise<void> {
  const tasks = Array.from({ length: count }, (_, i) => ({
    type: 'mark',
    input: { who: tenant, n: from + i, ms },
  }));
  const res = await service.http('POST', '/v1/jobs/batch', {
    body: { tasks },
    ...(tenant === 'beta' ? { key: KEY_B } : {}),
  });
  expect(res.status).toBe(207);
  expect(res.body.results.every((r: { status: number }) => r.status === 202)).toBe(true);
}

async function runOrder(prefix: string, expected: number): Promise<string[]> {
  return waitFor(
    async () => {
      const order = await redis.lrange(`${prefix}:test:order`, 0, -1);
      return order.length >= expected && order;
    },
    { timeoutMs: 20_000, what: `${expected} runs` },
  );
}

describe('fair share between tenants', () => {
  it('tenants take turns: one with a backlog does not hold back another', async () => {
    const service = await start();
    await submitMany(service, 'alpha', 1, 40);
    await submitMany(service, 'beta', 1, 3);
    await runWorker(service.prefix, 1);
    const order = await runOrder(service.prefix, 43);
    // Beta's three run among alpha's first four, not after alpha's forty.
    expect(order.slice(0, 6)).toEqual([
      'alpha:1',
      'beta:1',
      'alpha:2',
      'beta:2',
      'alpha:3',
      'beta:3',
    ]);
    // Each tenant's own tasks keep the order they were submitted in.
    const alpha = order.filter((o) => o.startsWith('alpha:')).map((o) => Number(o.slice(6)));
    expect(alpha).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  it('a tenant arriving late starts within a turn of the head, not after the backlog', async () => {
    const service = await start();
    await submitMany(service, 'alpha', 1, 100, 20);
    await submitMany(service, 'alpha', 101, 100, 20);
    await runWorker(service.prefix, 2);
    // Alpha's backlog is being worked through when beta's one task arrives.
    await runOrder(service.prefix, 20);
    await submitMany(service, 'beta', 1, 1);
    const order = await waitFor(
      async () => {
        const list = await redis.lrange(`${service.prefix}:test:order`, 0, -1);
        return list.includes('beta:1') && list;
      },
      { timeoutMs: 20_000, what: "beta's task to run" },
    );
    const before = order.indexOf('beta:1');
    // In arrival order it would run after all 200 of alpha's; here within a few turns (the jobs
    // already taken by the two slots, and alpha's at the head).
    expect(before).toBeLessThan(40);
    expect(order.length).toBeLessThan(60);
  });

  it('weights: a tenant of weight 3 gets three turns to one', async () => {
    const service = await start({ fairShare: { weights: new Map([['beta', 3]]) } });
    await submitMany(service, 'alpha', 1, 30);
    await submitMany(service, 'beta', 1, 30);
    await runWorker(service.prefix, 1);
    const order = (await runOrder(service.prefix, 60)).slice(0, 24);
    const beta = order.filter((o) => o.startsWith('beta:')).length;
    // 3 of every 4 turns while both have a backlog (18 of 24), give or take the first round.
    expect(beta).toBeGreaterThanOrEqual(16);
    expect(beta).toBeLessThanOrEqual(19);
  });

  it('a task’s own priority moves it within its tenant’s turns', async () => {
    const service = await start();
    await submitMany(service, 'alpha', 1, 5);
    const res = await service.http('POST', '/v1/jobs', {
      body: { type: 'mark', input: { who: 'alpha', n: 99 }, priority: 1 },
    });
    expect(res.status).toBe(202);
    const late = await service.http('POST', '/v1/jobs', {
      body: { type: 'mark', input: { who: 'alpha', n: 0 }, priority: 50 },
    });
    expect(late.status).toBe(202);
    await runWorker(service.prefix, 1);
    const order = await runOrder(service.prefix, 7);
    expect(order.at(-1)).toBe('alpha:0');
  });

  it('a task of priority 1 runs before its tenant’s earlier ones of priority 10', async () => {
    const service = await start();
    for (let n = 1; n <= 3; n++) {
      const low = await service.http('POST', '/v1/jobs', {
        body: { type: 'mark', input: { who: 'alpha', n }, priority: 10 },
      });
      expect(low.status).toBe(202);
    }
    const high = await service.http('POST', '/v1/jobs', {
      body: { type: 'mark', input: { who: 'alpha', n: 0 }, priority: 1 },
    });
    expect(high.status).toBe(202);
    await runWorker(service.prefix, 1);
    // The head's own offset is not virtual time: the low ones do not push the clock ahead.
    expect(await runOrder(service.prefix, 4)).toEqual(['alpha:0', 'alpha:1', 'alpha:2', 'alpha:3']);
  });

  // Issue 27: the virtual time grew without bound under steady traffic; once the tags reached
  // BullMQ's largest priority (2^21) every task got that priority, i.e. arrival order.
  it('stays fair once the virtual time has passed BullMQ’s largest priority', async () => {
    const service = await start();
    const fair = service.store.keys.fairShare(service.tasks.queueFor('mark').name);
    const far = 2 ** 21 + 5000;
    // '#at' ahead of now: the first submit must not take the queue for idle and reset the clock.
    await redis.hset(fair, 'alpha', far, '#v', far, '#at', Date.now() + 60_000);
    await submitMany(service, 'alpha', 1, 30);
    await submitMany(service, 'beta', 1, 1);
    await runWorker(service.prefix, 1);
    const order = await runOrder(service.prefix, 31);
    expect(order.indexOf('beta:1')).toBeLessThanOrEqual(2);
    const alpha = order.filter((o) => o.startsWith('alpha:')).map((o) => Number(o.slice(6)));
    expect(alpha).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });

  it('a task’s own priority still orders it within its tenant past 2^21', async () => {
    const service = await start();
    const fair = service.store.keys.fairShare(service.tasks.queueFor('mark').name);
    const far = 2 ** 21 + 5000;
    // '#at' ahead of now: the first submit must not take the queue for idle and reset the clock.
    await redis.hset(fair, 'alpha', far, '#v', far, '#at', Date.now() + 60_000);
    for (let n = 1; n <= 3; n++) {
      const low = await service.http('POST', '/v1/jobs', {
        body: { type: 'mark', input: { who: 'alpha', n }, priority: 10 },
      });
      expect(low.status).toBe(202);
    }
    const high = await service.http('POST', '/v1/jobs', {
      body: { type: 'mark', input: { who: 'alpha', n: 0 }, priority: 1 },
    });
    expect(high.status).toBe(202);
    await runWorker(service.prefix, 1);
    expect(await runOrder(service.prefix, 4)).toEqual(['alpha:0', 'alpha:1', 'alpha:2', 'alpha:3']);
  });

  it('moves a queued backlog down to a new base a bounded part per call, keeping its order', async () => {
    const service = await start();
    const queue = service.tasks.queueFor('mark');
    const fair = service.store.keys.fairShare(queue.name);
    const rebaseAt = 65_536; // REBASE_AT in the create script
    await redis.hset(fair, '#v', rebaseAt, '#at', Date.now() + 60_000);
    // Alpha's first task takes a second; behind it 199 more, their priorities just past the base.
    await service.http('POST', '/v1/jobs', {
      body: { type: 'mark', input: { who: 'alpha', n: 1, ms: 1000 } },
    });
    await submitMany(service, 'alpha', 2, 99);
    await submitMany(service, 'alpha', 101, 100);
    await runWorker(service.prefix, 1);
    await runOrder(service.prefix, 1);
    // The head is now past REBASE_AT: beta's creates move the backlog, 64 jobs per call.
    await submitMany(service, 'beta', 1, 1);
    const newBase = await redis.hget(fair, '#nb');
    expect(Number(newBase)).toBeGreaterThanOrEqual(rebaseAt);
    await submitMany(service, 'alpha', 201, 10);
    await submitMany(service, 'beta', 2, 1);
    for (let i = 0; i < 3; i++) await submitMany(service, 'beta', 3 + i, 1);
    // Done: every queued priority is written for the new base, and small.
    expect(await redis.hget(fair, '#b')).toBe(newBase);
    expect(await redis.hexists(fair, '#nb')).toBe(0);
    const scores = await redis.zrange(queue.toKey('prioritized'), 0, -1, 'WITHSCORES');
    const priorities = scores
      .filter((_, i) => i % 2 === 1)
      .map((x) => Math.floor(Number(x) / 2 ** 32));
    expect(Math.max(...priorities)).toBeLessThan(300);
    const order = await runOrder(service.prefix, 215);
    // Beta's tasks joined at the head, one turn apart, and alpha's kept their order.
    for (let b = 1; b <= 5; b++) expect(order.indexOf(`beta:${b}`)).toBeLessThanOrEqual(2 * b + 2);
    const alpha = order.filter((o) => o.startsWith('alpha:')).map((o) => Number(o.slice(6)));
    expect(alpha).toEqual(Array.from({ length: 210 }, (_, i) => i + 1));
  });

  it('LONGRUN_FAIR_SHARE=off queues in arrival order across tenants', async () => {
    const service = await start({ fairShare: false });
    await submitMany(service, 'alpha', 1, 10);
    await submitMany(service, 'beta', 1, 2);
    await runWorker(service.prefix, 1);
    const order = await runOrder(service.prefix, 12);
    expect(order.slice(10)).toEqual(['beta:1', 'beta:2']);
  });
});
