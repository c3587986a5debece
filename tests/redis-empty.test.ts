// Redis comes back empty (a failover to a fresh replica, a restart without persistence) under a
// running API and worker: the service must work again by itself, with no restart of either
// process, and the worker's log over the outage must stay a few lines (issue 27, item 9).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { httpClient, waitFor } from './helpers/http.js';
import { startApiProcess } from './helpers/processes.js';
import { promptReceiver } from './helpers/receivers.js';
import { API_KEYS, KEY_A, startWorker, uniquePrefix } from './helpers/service.js';
// @ts-expect-error plain ESM helper shared with `npm start`
import { findRedisServer, freePort, startRedis } from '../scripts/redis.mjs';

const cleanups = {
  items: [] as (() => unknown)[],
  add(fn: () => unknown) {
    this.items.push(fn);
  },
};
afterAll(async () => {
  for (const cleanup of cleanups.items.splice(0).reverse()) {
    await Promise.resolve()
      .then(cleanup)
      .catch(() => undefined);
  }
}, 60_000);

/** How long Redis stays away: long enough for every retry loop to fail many times over. */
const OUTAGE_MS = 8000;

interface Server {
  url: string;
  stop(): Promise<void>;
}

/** A redis-server of this test's own with no persistence (no AOF, no RDB): a restart empties it. */
async function emptyRedis(port: number): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'longrun-empty-redis-'));
  cleanups.add(() => rmSync(dir, { recursive: true, force: true }));
  const redis = (await startRedis({
    bin: findRedisServer(),
    port,
    dir,
    appendonly: false,
  })) as Server;
  cleanups.add(() => redis.stop());
  return redis;
}

it(
  'after Redis restarts empty, webhooks, job types, shards, schedules and submits work again; the worker logs a few lines',
  { timeout: 120_000 },
  async () => {
    const port = (await freePort()) as number;
    let redis = await emptyRedis(port);
    const prefix = uniquePrefix();
    const receiver = await promptReceiver();
    cleanups.add(() => receiver.close());
    const common = {
      REDIS_URL: redis.url,
      LONGRUN_PREFIX: prefix,
      LONGRUN_WEBHOOK_ALLOW: '127.0.0.1',
      // Two shards, so the count the API announces (gone with the data) matters to workers.
      LONGRUN_SHARDS: '2',
    };
    const api = await startApiProcess(cleanups, {
      ...common,
      LONGRUN_API_KEYS: API_KEYS,
      LONGRUN_REDIS_TIMEOUT_MS: '1000',
    });
    const http = httpClient(api.url, KEY_A);
    const worker = await startWorker(prefix, { ...common, LONGRUN_SHARDS: '1' });
    cleanups.add(() => worker.kill());
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 1, lazyConnect: true });
    admin.on('error', () => undefined);
    cleanups.add(() => admin.disconnect());

    /** Submits an echo with a webhook; waits until it completed and its webhook arrived. */
    const roundTrip = async (label: string) => {
      const res = await waitFor(
        async () => {
          const r = await http('POST', '/v1/jobs', {
            body: { type: 'echo', input: { label }, callback: { url: receiver.url } },
          });
          return r.status === 202 ? r : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 250, what: `a 202 for the ${label} submit` },
      );
      const taskId = res.body.taskId as string;
      const done = await waitFor(
        async () => {
          const r = await http('GET', `/v1/jobs/${taskId}`);
          return r.body?.status === 'completed' ? r : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 100, what: `the ${label} task to complete` },
      );
      expect(done.body.result).toEqual({ label });
      await waitFor(
        async () =>
          receiver.deliveries.some((d) => {
            const body = JSON.parse(d.body) as { task: { taskId: string; status: string } };
            return body.task.taskId === taskId && body.task.status === 'completed';
          }),
        { timeoutMs: 20_000, intervalMs: 100, what: `the ${label} task's webhook` },
      );
      return taskId;
    };

    /** A schedule ticking every second; resolves once it made a task that completed. */
    const scheduleTicks = async (label: string) => {
      const created = await http('POST', '/v1/schedules', {
        body: { type: 'echo', input: { label }, everyMs: 1000 },
      });
      expect(created.status, created.text).toBe(201);
      const scheduleId = created.body.scheduleId as string;
      await waitFor(
        async () => {
          const page = await http('GET', `/v1/jobs?scheduleId=${scheduleId}`);
          return page.body?.tasks?.some((t: { status: string }) => t.status === 'completed');
        },
        { timeoutMs: 20_000, intervalMs: 200, what: `a task of the ${label} schedule` },
      );
      return scheduleId;
    };

    // Before: everything works.
    await roundTrip('before');
    const oldSchedule = await scheduleTicks('before');
    await admin.connect();
    expect(await admin.get(`${prefix}:shards`)).toBe('2');
    admin.disconnect();

    // Redis goes away and comes back on the same port with nothing in it.
    const linesBefore = worker.lines.length;
    await redis.stop();
    await sleep(OUTAGE_MS);
    redis = await emptyRedis(port);
    await admin.connect();
    expect(await admin.dbsize()).toBeLessThan(5); // fresh: at most what reconnecting made

    // Job types come back (the worker's heartbeat), and the shard count (the API's).
    await waitFor(
      async () => {
        const res = await http('GET', '/v1/job-types');
        return res.status === 200 &&
          res.body.jobTypes?.some((t: { name: string }) => t.name === 'echo')
          ? res
          : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250, what: 'GET /v1/job-types to list echo again' },
    );
    await waitFor(async () => (await admin.get(`${prefix}:shards`)) === '2', {
      timeoutMs: 10_000,
      intervalMs: 200,
      what: 'the API to announce its 2 shards again',
    });
    // Submits, runs and webhooks (the relay's consumer group was lost with the data).
    const after = await roundTrip('after');
    expect(after).toBeTruthy();
    // A schedule made before is gone with its definition; a new one ticks.
    expect((await http('GET', `/v1/schedules/${oldSchedule}`)).status).toBe(404);
    await scheduleTicks('after');
    // Every shard is served: enough submits land on both.
    for (let i = 0; i < 3; i++) await roundTrip(`after-${i}`);

    // The worker's log over the outage and the recovery: a few lines per kind of failure, no
    // stack traces, and no line repeated each second (NOGROUP).
    const outageLines = worker.lines.slice(linesBefore);
    const report = outageLines.join('\n');
    expect(outageLines.filter((l) => /NOGROUP/.test(l)).length, report).toBeLessThanOrEqual(1);
    expect(
      outageLines.filter((l) => /\\n\s+at /.test(l) || /^\s+at /.test(l)),
      report,
    ).toEqual([]);
    const warnings = outageLines.filter((l) => /"level":(40|50)/.test(l));
    expect(warnings.length, report).toBeLessThanOrEqual(12);
  },
);
