import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createClient, LongrunError } from '@longrun/client';
import { createRedis, SCHEDULE_QUEUE_NAME } from '@longrun/engine/internal';
import { httpClient, waitFor, type HttpResult } from './helpers/http.js';
import { startApiProcess, type Proc } from './helpers/processes.js';
import {
  API_KEYS,
  KEY_A,
  KEY_B,
  startInProcessApi,
  startWorker,
  uniquePrefix,
  type InProcessApi,
  workerRedis,
} from './helpers/service.js';

// Schedules (recurring tasks): created, read and deleted per tenant over HTTP, the SDK's way and
// the CLI's; each tick is an ordinary task with the schedule's id on its handle; and with two API
// and two worker processes on one prefix, one task per tick, none after the delete.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CLI = resolve(import.meta.dirname, '../apps/cli/dist/main.js');

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await Promise.resolve()
      .then(cleanup)
      .catch(() => undefined);
  }
});

/** The tasks a schedule made, as tenant "alpha" lists them (every page). */
async function tasksOf(
  http: ReturnType<typeof httpClient>,
  scheduleId: string,
): Promise<{ taskId: string; createdAt: string; scheduleId?: string; status: string }[]> {
  const tasks = [];
  let cursor: string | null = null;
  do {
    const page: HttpResult = await http(
      'GET',
      `/v1/jobs?scheduleId=${scheduleId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
    );
    expect(page.status, page.text).toBe(200);
    tasks.push(...page.body.tasks);
    cursor = page.body.nextCursor;
  } while (cursor);
  return tasks;
}

describe('schedules on one API', { timeout: 60_000 }, () => {
  let api: InProcessApi;
  let ticker: Redis;
  let worker: Proc;

  beforeAll(async () => {
    api = await startInProcessApi({ maxSchedules: 3 });
    // As main.ts does: ticks become tasks on a worker-role connection of the API's own, closed
    // after the engine (which stops the ticker).
    // The suite's Redis, or its cluster (`npm run test:cluster`).
    ticker = createRedis(inject('redisUrl'), 'worker', {
      clusterNodes: workerRedis().clusterNodes,
    });
    ticker.on('error', () => undefined);
    cleanups.push(async () => {
      await api.close();
      ticker.disconnect();
    });
    if (ticker.status !== 'ready') await new Promise((ready) => ticker.once('ready', ready));
    await api.engine.startScheduleTicker(ticker);
    worker = await startWorker(api.prefix);
    cleanups.push(() => worker.stop());
  }, 60_000);

  /** Deletes every schedule of tenant "alpha", so each test starts under the cap. */
  async function deleteAll(): Promise<void> {
    const list = await api.http('GET', '/v1/schedules');
    for (const s of list.body.schedules) await api.http('DELETE', `/v1/schedules/${s.scheduleId}`);
  }

  it('creates (201, nextRunAt, Location), lists, reads and deletes a schedule; another tenant sees 404', async () => {
    await deleteAll();
    const before = Date.now();
    const created = await api.http('POST', '/v1/schedules', {
      body: { type: 'echo', input: { n: 1 }, cron: '0 6 * * *', tz: 'Europe/Paris', ttlMs: 60_000 },
    });
    expect(created.status, created.text).toBe(201);
    const schedule = created.body;
    expect(schedule).toMatchObject({
      type: 'echo',
      input: { n: 1 },
      cron: '0 6 * * *',
      tz: 'Europe/Paris',
      ttlMs: 60_000,
    });
    expect(schedule.scheduleId).toMatch(UUID);
    expect(created.headers.get('location')).toBe(`/v1/schedules/${schedule.scheduleId}`);
    // 06:00 in Paris is 04:00 or 05:00 UTC, within the next day.
    const next = Date.parse(schedule.nextRunAt);
    expect(next).toBeGreaterThan(before);
    expect(next - before).toBeLessThanOrEqual(86_400_000);
    expect([4, 5]).toContain(new Date(next).getUTCHours());

    const every = await api.http('POST', '/v1/schedules', {
      body: { type: 'sleep', input: { ms: 10 }, everyMs: 3_600_000 },
    });
    expect(every.status, every.text).toBe(201);
    // The first tick of a period is due at once.
    expect(Date.parse(every.body.nextRunAt)).toBeLessThanOrEqual(Date.now());

    const got = await api.http('GET', `/v1/schedules/${schedule.scheduleId}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(schedule);
    const list = await api.http('GET', '/v1/schedules');
    expect(list.status).toBe(200);
    expect(list.body.schedules.map((s: { scheduleId: string }) => s.scheduleId)).toEqual([
      every.body.scheduleId,
      schedule.scheduleId,
    ]);

    // Tenant "beta" neither sees nor deletes alpha's schedules.
    const beta = httpClient(api.url, KEY_B);
    expect((await beta('GET', `/v1/schedules/${schedule.scheduleId}`)).status).toBe(404);
    const foreign = await beta('DELETE', `/v1/schedules/${schedule.scheduleId}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ type: '/problems/schedule-not-found', status: 404 });
    expect((await beta('GET', '/v1/schedules')).body).toEqual({ schedules: [] });
    expect((await api.http('GET', '/v1/schedules/not-an-id')).status).toBe(404);
    expect((await api.http('GET', '/v1/schedules', { key: null })).status).toBe(401);

    expect((await api.http('DELETE', `/v1/schedules/${schedule.scheduleId}`)).status).toBe(204);
    expect((await api.http('GET', `/v1/schedules/${schedule.scheduleId}`)).status).toBe(404);
    expect((await api.http('DELETE', `/v1/schedules/${schedule.scheduleId}`)).status).toBe(404);
  });

  it('refuses a bad cron, a too short period, an unknown type (400) and input that does not fit (422)', async () => {
    await deleteAll();
    const create = (body: unknown) => api.http('POST', '/v1/schedules', { body });
    const refusals: [unknown, number, string][] = [
      [{ type: 'echo', cron: 'every day' }, 400, 'cron'],
      [{ type: 'echo', cron: '61 * * * *' }, 400, 'cron'],
      [{ type: 'echo', cron: '0 6 * * *', tz: 'Mars/Olympus' }, 400, 'tz'],
      [{ type: 'echo', everyMs: 999 }, 400, 'everyMs'],
      [{ type: 'echo' }, 400, 'cron'],
      [{ type: 'echo', everyMs: 5000, cron: '0 6 * * *' }, 400, 'everyMs'],
      [{ type: 'echo', everyMs: 5000, tz: 'UTC' }, 400, 'tz'],
      [{ type: 'echo', everyMs: 5000, every: 5000 }, 400, 'every'],
      [{ type: 'resize', everyMs: 5000 }, 400, 'type'],
      [{ type: 'sleep', input: { ms: 'soon' }, everyMs: 5000 }, 422, 'input.ms'],
    ];
    for (const [body, status, path] of refusals) {
      const res = await create(body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      if (path) {
        expect(
          res.body.errors.map((e: { path: string }) => e.path),
          JSON.stringify(body),
        ).toContain(path);
      }
    }
    // A cron's runs closer than the minimum are refused too (schedule-timing.test.ts: a cron's
    // finest step, a second, is this API's minimum): every second is accepted.
    const ok = await create({ type: 'echo', cron: '* * * * * *', tz: 'UTC' });
    expect(ok.status, ok.text).toBe(201);
    expect((await api.http('GET', '/v1/schedules')).body.schedules).toHaveLength(1);
  });

  it('stops at the cap of schedules per tenant (409); another tenant has its own', async () => {
    await deleteAll();
    const body = { type: 'echo', cron: '0 6 * * *' };
    for (let i = 0; i < 3; i += 1) {
      expect((await api.http('POST', '/v1/schedules', { body })).status).toBe(201);
    }
    const full = await api.http('POST', '/v1/schedules', { body });
    expect(full.status).toBe(409);
    expect(full.body).toMatchObject({ type: '/problems/too-many-schedules', status: 409 });
    const beta = httpClient(api.url, KEY_B);
    expect((await beta('POST', '/v1/schedules', { body })).status).toBe(201);
    await deleteAll();
    expect((await api.http('POST', '/v1/schedules', { body })).status).toBe(201);
  });

  it('issue 27 #14: a cron too rare to check is refused (400) after a bounded search; at the cap the pattern is not evaluated', async () => {
    await deleteAll();
    const create = (body: unknown, headers?: Record<string, string>) =>
      api.http('POST', '/v1/schedules', { body, ...(headers ? { headers } : {}) });
    // Fifth Sunday of February (once every 28 years; ~1.1 s of event loop to find twenty runs)
    // and a pattern that never runs: both refused as not running within the check's horizon.
    for (const cron of ['0 0 0 ? 2 7#5', '0 0 0 31 2,4,6,9,11 *']) {
      const refused = await create({ type: 'echo', cron, tz: 'Pacific/Chatham' });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ type: '/problems/invalid-request', status: 400 });
      expect(refused.body.errors).toEqual([
        {
          path: 'cron',
          message: expect.stringMatching(/^no run within the next 367 days/),
        },
      ]);
    }
    const body = { type: 'echo', cron: '0 6 * * *' };
    const keyed = { 'idempotency-key': `at-cap-${Date.now()}` };
    for (let i = 0; i < 2; i += 1) expect((await create(body)).status).toBe(201);
    const third = await create(body, keyed);
    expect(third.status).toBe(201);
    // At the cap, the cap's problem comes before the pattern is looked at: a pattern the check
    // would refuse (400) is answered 409, so a tenant at its cap cannot make the API evaluate it.
    const full = await create({ type: 'echo', cron: '0 0 0 31 2,4,6,9,11 *' });
    expect(full.status).toBe(409);
    expect(full.body).toMatchObject({ type: '/problems/too-many-schedules', status: 409 });
    const bad = await create({ type: 'echo', cron: 'every day' });
    expect(bad.status).toBe(409);
    // A repeat of a create the tenant made is still its replay, at the cap too.
    const replay = await create(body, keyed);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.scheduleId).toBe(third.body.scheduleId);
    await deleteAll();
  });

  it('with an Idempotency-Key a repeated create is the same schedule; another body is 422; a delete frees the key', async () => {
    await deleteAll();
    const body = { type: 'echo', input: { n: 2 }, cron: '0 6 * * *' };
    const headers = { 'idempotency-key': `schedule-${Date.now()}` };
    const create = (b: unknown = body, http = api.http) =>
      http('POST', '/v1/schedules', { body: b, headers });
    const first = await create();
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await create();
    expect(again.status, again.text).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.body).toEqual(first.body);
    // Repeats racing each other: still the one schedule.
    const burst = await Promise.all(Array.from({ length: 5 }, () => create()));
    expect(new Set(burst.map((r) => r.body.scheduleId))).toEqual(new Set([first.body.scheduleId]));
    expect((await api.http('GET', '/v1/schedules')).body.schedules).toHaveLength(1);

    const other = await create({ ...body, input: { n: 3 } });
    expect(other.status, other.text).toBe(422);
    expect(other.body).toMatchObject({ type: '/problems/idempotency-key-reused', status: 422 });
    // Another tenant's same key is a key of its own.
    const beta = httpClient(api.url, KEY_B);
    const theirs = await create(body, beta);
    expect(theirs.status, theirs.text).toBe(201);
    expect(theirs.body.scheduleId).not.toBe(first.body.scheduleId);
    expect((await beta('DELETE', `/v1/schedules/${theirs.body.scheduleId}`)).status).toBe(204);

    // Deleted, the schedule lets its key go: the same create makes a new one.
    expect((await api.http('DELETE', `/v1/schedules/${first.body.scheduleId}`)).status).toBe(204);
    const fresh = await create();
    expect(fresh.status, fresh.text).toBe(201);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(fresh.body.scheduleId).not.toBe(first.body.scheduleId);
    const malformed = await api.http('POST', '/v1/schedules', {
      body,
      headers: { 'idempotency-key': 'with space' },
    });
    expect(malformed.status, malformed.text).toBe(400);
    expect((await api.http('GET', '/v1/schedules')).body.schedules).toHaveLength(1);
  });

  it("each tick is an ordinary task of the tenant, listed with the schedule's id", async () => {
    await deleteAll();
    const created = await api.http('POST', '/v1/schedules', {
      body: { type: 'echo', input: { tick: true }, everyMs: 1000, ttlMs: 600_000 },
    });
    expect(created.status, created.text).toBe(201);
    const { scheduleId } = created.body;
    const direct = await api.http('POST', '/v1/jobs', { body: { type: 'echo', input: {} } });
    expect(direct.status).toBe(202);
    expect(direct.body).not.toHaveProperty('scheduleId');

    const tasks = await waitFor(
      async () => {
        const found = await tasksOf(api.http, scheduleId);
        return found.length >= 3 && found;
      },
      { what: 'three ticks', timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(tasks.every((t) => t.scheduleId === scheduleId)).toBe(true);
    expect(tasks.map((t) => t.taskId)).not.toContain(direct.body.taskId);
    // The task's own handle carries it too, and the worker runs it as any other.
    const done = await waitFor(
      async () => {
        const res = await api.http('GET', `/v1/jobs/${tasks.at(-1)!.taskId}`);
        return res.body.status === 'completed' && res.body;
      },
      { what: 'the first tick task to complete' },
    );
    expect(done).toMatchObject({
      scheduleId,
      type: 'echo',
      ttlMs: 600_000,
      result: { tick: true },
    });
    // The filter works beside the others, and takes schedule ids only.
    const echo = await api.http('GET', `/v1/jobs?scheduleId=${scheduleId}&type=echo&limit=100`);
    expect(echo.body.tasks.length).toBeGreaterThanOrEqual(3);
    const none = await api.http('GET', `/v1/jobs?scheduleId=${scheduleId}&type=sleep`);
    expect(none.body.tasks).toEqual([]);
    const bad = await api.http('GET', '/v1/jobs?scheduleId=nope');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('scheduleId');
    // Another tenant's list shows none of them, filtered or not.
    const beta = httpClient(api.url, KEY_B);
    expect((await beta('GET', `/v1/jobs?scheduleId=${scheduleId}`)).body.tasks).toEqual([]);

    const schedule = await api.http('GET', `/v1/schedules/${scheduleId}`);
    expect(schedule.body.lastTaskId).toMatch(UUID);
    expect(Date.parse(schedule.body.lastRunAt)).toBeGreaterThanOrEqual(
      Date.parse(tasks[0]!.createdAt),
    );
    expect(schedule.body).not.toHaveProperty('lastError');
    expect((await api.http('DELETE', `/v1/schedules/${scheduleId}`)).status).toBe(204);
  });

  it('a tick delivered again (a stalled or retried tick job) finds its task instead of making one', async () => {
    await deleteAll();
    const created = await api.http('POST', '/v1/schedules', {
      body: { type: 'echo', input: {}, cron: '0 6 1 1 *' },
    });
    expect(created.status).toBe(201);
    const { scheduleId } = created.body;
    // The same tick job twice, as BullMQ hands out a job again after its process died; and a
    // tick of a schedule that is gone.
    const queue = new Queue(SCHEDULE_QUEUE_NAME, {
      connection: api.tasks.redis,
      prefix: api.prefix,
    });
    try {
      const tick = { jobId: `repeat:${scheduleId}:1700000000000`, removeOnComplete: true };
      const finished = async () => (await queue.getJobCounts('wait', 'active')).active === 0;
      await queue.add('tick', { scheduleId }, tick);
      const [first] = await waitFor(
        async () => {
          const found = await tasksOf(api.http, scheduleId);
          return found.length === 1 && (await finished()) && found;
        },
        { what: 'the tick task' },
      );
      const lastRun = async () =>
        (await api.http('GET', `/v1/schedules/${scheduleId}`)).body.lastRunAt as string;
      const firstRun = await waitFor(lastRun, { what: 'the first tick noted' });
      await queue.add('tick', { scheduleId }, tick);
      // The second delivery ran (it noted its run) and found the first task.
      await waitFor(async () => (await lastRun()) !== firstRun && finished(), {
        what: 'the second delivery noted',
      });
      expect((await tasksOf(api.http, scheduleId)).map((t) => t.taskId)).toEqual([first!.taskId]);
      const schedule = await api.http('GET', `/v1/schedules/${scheduleId}`);
      expect(schedule.body.lastTaskId).toBe(first!.taskId);

      expect((await api.http('DELETE', `/v1/schedules/${scheduleId}`)).status).toBe(204);
      await queue.add('tick', { scheduleId }, { ...tick, jobId: `repeat:${scheduleId}:1` });
      await waitFor(async () => (await queue.getJobCounts('wait')).wait === 0 && finished());
      await sleep(300);
      expect(await tasksOf(api.http, scheduleId)).toHaveLength(1);
    } finally {
      await queue.close();
    }
  });

  it('the SDK creates, lists, reads and deletes schedules, and lists their tasks', async () => {
    await deleteAll();
    const lr = createClient({ baseUrl: api.url, apiKey: KEY_A });
    const schedule = await lr.createSchedule(
      'echo',
      { via: 'sdk' },
      { everyMs: 1000, ttlMs: 60_000 },
    );
    expect(schedule).toMatchObject({ type: 'echo', input: { via: 'sdk' }, everyMs: 1000 });
    expect(schedule.scheduleId).toMatch(UUID);
    const daily = await lr.createSchedule('echo', {}, { cron: '30 7 * * *', tz: 'Asia/Tokyo' });
    expect(daily.tz).toBe('Asia/Tokyo');
    expect((await lr.listSchedules()).map((s) => s.scheduleId)).toEqual([
      daily.scheduleId,
      schedule.scheduleId,
    ]);
    const page = await waitFor(
      async () => {
        const found = await lr.list({ scheduleId: schedule.scheduleId });
        return found.tasks.length >= 1 && found;
      },
      { what: 'a task of the SDK schedule' },
    );
    expect(page.tasks[0]!.scheduleId).toBe(schedule.scheduleId);
    const read = await lr.getSchedule(schedule.scheduleId);
    expect(read.lastTaskId).toMatch(UUID);

    await lr.deleteSchedule(schedule.scheduleId);
    await lr.deleteSchedule(daily.scheduleId);
    expect(await lr.listSchedules()).toEqual([]);
    const missing = await lr.getSchedule(schedule.scheduleId).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(LongrunError);
    expect(missing).toMatchObject({ status: 404, type: '/problems/schedule-not-found' });
    const refused = await lr.createSchedule('echo', {}, { everyMs: 10 }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, errors: [{ path: 'everyMs' }] });
  });

  it('the CLI creates, lists, shows and deletes schedules, and lists their tasks', async () => {
    await deleteAll();
    const longrun = (args: string[]) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { ...process.env, LONGRUN_URL: api.url, LONGRUN_API_KEY: KEY_A },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
        child.on('close', (code) => done({ code, stdout, stderr })),
      );
    };
    const create = [
      'schedules',
      'create',
      'echo',
      '--input',
      '{"from":"cli"}',
      '--every-ms',
      '1000',
      '--idempotency-key',
      `cli-${Date.now()}`,
    ];
    const created = await longrun(create);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(UUID);
    // Run again with its key: the same schedule, not a second one.
    const repeated = await longrun(create);
    expect(repeated.code, repeated.stderr).toBe(0);
    expect(repeated.stdout.trim()).toBe(id);

    const list = await longrun(['schedules', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^SCHEDULE\s+TYPE\s+WHEN\s+NEXT RUN\s+LAST TASK/);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain('every 1000 ms');

    const shown = await longrun(['schedules', 'get', id, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ scheduleId: id, input: { from: 'cli' } });

    const tasks = await waitFor(
      async () => {
        const run = await longrun(['list', '--schedule', id, '--json']);
        const page = JSON.parse(run.stdout) as { tasks: { scheduleId: string }[] };
        return page.tasks.length >= 1 && page.tasks;
      },
      { what: 'a task of the CLI schedule', timeoutMs: 20_000, intervalMs: 500 },
    );
    expect(tasks.every((t) => t.scheduleId === id)).toBe(true);

    const deleted = await longrun(['schedules', 'delete', id]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe(`deleted ${id}\n`);
    const gone = await longrun(['schedules', 'get', id]);
    expect(gone.code).toBe(4);
    expect(gone.stderr).toContain('Schedule not found');

    const usage = await longrun(['schedules', 'create', 'echo']);
    expect(usage.code).toBe(4);
    expect(usage.stderr).toContain('--cron <pattern> or --every-ms <n>');
    const refused = await longrun(['schedules', 'create', 'echo', '--every-ms', '10']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('everyMs');
  });
});

describe('two API and two worker processes', { timeout: 120_000 }, () => {
  it('make exactly one task per tick of a schedule, and none once it is deleted', async () => {
    const prefix = uniquePrefix();
    const env = {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
      // Each tick an API process turns into a task is a debug line: which process took which.
      LOG_LEVEL: 'debug',
    };
    const registry = { add: (fn: () => unknown) => cleanups.push(fn) };
    const workers = await Promise.all([startWorker(prefix), startWorker(prefix)]);
    for (const w of workers) cleanups.push(() => w.stop());
    const [one, two] = await Promise.all([
      startApiProcess(registry, env),
      startApiProcess(registry, env),
    ]);
    const httpOne = httpClient(one!.url, KEY_A);
    const httpTwo = httpClient(two!.url, KEY_A);

    // Created through one API, read through the other: both tick the same queue.
    const created = await httpOne('POST', '/v1/schedules', {
      body: { type: 'echo', input: { at: 'tick' }, everyMs: 1000 },
    });
    expect(created.status, created.text).toBe(201);
    const { scheduleId } = created.body;
    const firstRunAt = Date.parse(created.body.nextRunAt);

    await sleep(6000);
    // Ticks due by half a second ago have surely made their task by now (the last one may have).
    const elapsedTicks = Math.floor((Date.now() - 500 - firstRunAt) / 1000) + 1;
    const tasks = await tasksOf(httpTwo, scheduleId);
    // Ticks due by the end of the list's read: on a loaded host (a Cluster run) the read itself
    // can take a second or more, and the ticks falling due meanwhile are in it.
    const dueByRead = Math.floor((Date.now() - firstRunAt) / 1000) + 1;
    const times = tasks.map((t) => Date.parse(t.createdAt)).sort((a, b) => a - b);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    const ticked = [one!, two!].map(
      (api) => api.lines.filter((l) => l.includes('schedule tick made its task')).length,
    );
    console.log(
      JSON.stringify({ elapsedTicks, tasks: tasks.length, gaps, tickedByEachApi: ticked }),
    );
    // One task per tick: each tick the APIs took (logged with its tick job's id) made one task,
    // and no tick was taken twice. On a loaded host ticks can run late, so against the clock
    // only: never more tasks than ticks due (plus the one under way), and ticks keep coming.
    const logged = () =>
      [one!, two!]
        .flatMap((api) => api.lines)
        .filter((l) => l.includes('schedule tick made its task'))
        .map(
          (l) =>
            JSON.parse(l.slice(l.indexOf('{'))) as {
              tick: string;
              taskId: string;
              replayed: boolean;
            },
        )
        .filter((l) => !l.replayed); // a tick delivered again finds its task: not a new one
    // A tick logs once its task is stored: the line of one under way may come a moment later.
    const tickLines = await waitFor(
      async () => {
        const lines = logged();
        const ids = new Set(lines.map((l) => l.taskId));
        return tasks.every((t) => ids.has(t.taskId)) && lines;
      },
      { timeoutMs: 3000, what: 'a tick line for every task' },
    ).catch(() => logged());
    expect(new Set(tickLines.map((l) => l.tick)).size).toBe(tickLines.length);
    const made = new Set(tickLines.map((l) => l.taskId));
    expect(made.size).toBe(tickLines.length);
    // Every task came from a tick (and one more tick may have landed since the list was read).
    for (const t of tasks) expect(made.has(t.taskId), t.taskId).toBe(true);
    expect(tickLines.length - tasks.length).toBeLessThanOrEqual(1);
    expect(tasks.length).toBeLessThanOrEqual(dueByRead + 1);
    expect(tasks.length).toBeGreaterThanOrEqual(Math.min(3, elapsedTicks));
    expect(new Set(tasks.map((t) => t.taskId)).size).toBe(tasks.length);
    // Two tasks of one tick would be made within milliseconds of each other (both processes see
    // the tick at once); ticks are a second apart, give or take the processes' latency.
    for (const gap of gaps) expect(gap).toBeGreaterThan(250);
    expect(tasks.every((t) => t.scheduleId === scheduleId)).toBe(true);
    // The workers run them.
    await waitFor(
      async () => {
        const now = await tasksOf(httpTwo, scheduleId);
        return now.slice(1).every((t) => t.status === 'completed');
      },
      { what: 'the tick tasks to complete' },
    );

    expect((await httpTwo('DELETE', `/v1/schedules/${scheduleId}`)).status).toBe(204);
    const atDelete = (await tasksOf(httpOne, scheduleId)).length;
    // A tick under way when the delete arrived may still land; nothing after it.
    await sleep(500);
    const settled = (await tasksOf(httpOne, scheduleId)).length;
    expect(settled - atDelete).toBeLessThanOrEqual(1);
    await sleep(3500);
    expect((await tasksOf(httpOne, scheduleId)).length).toBe(settled);
    expect((await httpOne('GET', `/v1/schedules/${scheduleId}`)).status).toBe(404);
    expect((await httpOne('GET', '/v1/schedules')).body).toEqual({ schedules: [] });
  });
});
