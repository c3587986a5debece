import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor, type HttpResult } from './helpers/http.js';
import { startInProcessApi, type InProcessApi, oneShard } from './helpers/service.js';
// @ts-expect-error plain ESM helper shared with `npm start`
import { findRedisServer, freePort, startRedis } from '../scripts/redis.mjs';

// This file counts one shard's keys and queues.
oneShard();

interface PrivateRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

// Everything the tests start, stopped in reverse order at the end whatever happened.
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await Promise.resolve()
      .then(cleanup)
      .catch(() => undefined);
  }
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'longrun-fault-redis-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A private redis-server; stopped in afterAll (stopping twice is harmless). */
async function privateRedis(opts: {
  dir: string;
  port?: number;
  appendonly?: boolean;
  args?: string[];
}): Promise<PrivateRedis> {
  const bin = findRedisServer();
  expect(bin, 'redis-server binary').toBeTruthy();
  const redis: PrivateRedis = await startRedis({
    bin,
    port: opts.port ?? (await freePort()),
    dir: opts.dir,
    appendonly: opts.appendonly ?? false,
    args: opts.args ?? [],
  });
  cleanups.push(() => redis.stop());
  return redis;
}

async function api(redisUrl: string): Promise<InProcessApi> {
  const started = await startInProcessApi({ redisUrl, redisTimeoutMs: 1000 });
  cleanups.push(() => started.close());
  return started;
}

/** A plain connection for INFO / CONFIG / DEBUG; quit in afterAll. */
function admin(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  cleanups.push(() => redis.quit().catch(() => redis.disconnect()));
  return redis;
}

async function timed(request: () => Promise<HttpResult>): Promise<[HttpResult, number]> {
  const started = Date.now();
  const res = await request();
  return [res, Date.now() - started];
}

function expectUnavailable(res: HttpResult, elapsedMs: number, what: string) {
  expect(res.status, `${what}: ${res.text}`).toBe(503);
  expect(res.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
  expect(Number(res.headers.get('retry-after')), what).toBeGreaterThan(0);
  expect(res.body.status, what).toBe(503);
  expect(elapsedMs, `${what} answered in ${elapsedMs} ms`).toBeLessThan(5000);
}

describe('Redis goes away', () => {
  it('answers 503 fast while Redis is down and recovers by itself when it returns', async () => {
    const dir = tempDir();
    const redis = await privateRedis({ dir, appendonly: true });
    const a = await api(redis.url);

    const accepted: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await a.http('POST', '/v1/jobs', { body: { type: 'echo', input: { i } } });
      expect(res.status, res.text).toBe(202);
      accepted.push(res.body.taskId);
    }

    await redis.stop();

    const [post, postMs] = await timed(() =>
      a.http('POST', '/v1/jobs', { body: { type: 'echo', input: { down: true } } }),
    );
    expectUnavailable(post, postMs, 'POST /v1/jobs');
    // The other submit path (the record's answer before the job): refused the same way, and the
    // create waiting for the connection must not land after its own discard once Redis is back.
    const [keyed, keyedMs] = await timed(() =>
      a.http('POST', '/v1/jobs', {
        body: { type: 'echo', input: { down: 'keyed' } },
        headers: { 'idempotency-key': `down-${randomUUID()}` },
      }),
    );
    expectUnavailable(keyed, keyedMs, 'POST /v1/jobs with an Idempotency-Key');
    const [get, getMs] = await timed(() => a.http('GET', `/v1/jobs/${accepted[0]}`));
    expectUnavailable(get, getMs, 'GET /v1/jobs/<id>');
    const [list, listMs] = await timed(() => a.http('GET', '/v1/jobs'));
    expectUnavailable(list, listMs, 'GET /v1/jobs');
    // A type this API has not read yet makes it re-read the registry: unavailable too, not 400/500.
    const [unknown, unknownMs] = await timed(() =>
      a.http('POST', '/v1/jobs', { body: { type: 'registered-meanwhile', input: {} } }),
    );
    expectUnavailable(unknown, unknownMs, 'POST /v1/jobs of a type not read yet');
    const [types, typesMs] = await timed(() => a.http('GET', '/v1/job-types'));
    expectUnavailable(types, typesMs, 'GET /v1/job-types');

    const [ready, readyMs] = await timed(() => a.http('GET', '/readyz', { key: null }));
    expect(ready.status).toBe(503);
    expect(readyMs).toBeLessThan(5000);
    const health = await a.http('GET', '/healthz', { key: null });
    expect(health.status).toBe(200);

    // Same port, same data dir: the AOF brings the tasks back.
    await privateRedis({ dir, port: redis.port, appendonly: true });
    const recovered = await waitFor(
      async () => {
        const res = await a.http('POST', '/v1/jobs', { body: { type: 'echo', input: { up: 1 } } });
        return res.status === 202 ? res : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 250, what: 'POST /v1/jobs to answer 202 again' },
    );
    expect(recovered.body.status).toBe('working');

    for (const id of [...accepted, recovered.body.taskId]) {
      const res = await a.http('GET', `/v1/jobs/${id}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.taskId).toBe(id);
    }
    expect((await a.http('GET', '/readyz', { key: null })).status).toBe(200);
    // Nothing of the refused submits is left once the writes they were waiting to send have run.
    await sleep(500);
    const page = await a.http('GET', '/v1/jobs?limit=100');
    expect(page.status).toBe(200);
    expect(page.body.tasks.map((t: { taskId: string }) => t.taskId).sort()).toEqual(
      [...accepted, recovered.body.taskId].sort(),
    );
  });
});

describe('Redis is full', () => {
  it('answers 507 (never 500) when maxmemory is reached, and 202 again once there is room', async () => {
    const redis = await privateRedis({ dir: tempDir() });
    const a = await api(redis.url);
    const conn = admin(redis.url);

    // Warm up (scripts loaded, queue keys created) before measuring.
    const first = await a.http('POST', '/v1/jobs', { body: { type: 'echo', input: {} } });
    expect(first.status, first.text).toBe(202);

    const info = await conn.info('memory');
    const used = Number(/^used_memory:(\d+)/m.exec(info)?.[1]);
    expect(used).toBeGreaterThan(0);
    await conn.config('SET', 'maxmemory', String(used + 1_500_000));

    const pad = 'x'.repeat(50 * 1024);
    const accepted: string[] = [first.body.taskId];
    const refusals: { res: HttpResult; key: string; body: unknown }[] = [];
    for (let i = 0; i < 200 && refusals.length < 3; i++) {
      const key = randomUUID();
      const body = { type: 'echo', input: { i, pad } };
      const res = await a.http('POST', '/v1/jobs', { body, headers: { 'idempotency-key': key } });
      if (res.status === 202) {
        expect(refusals, 'a submit was accepted after a refusal while still full').toHaveLength(0);
        accepted.push(res.body.taskId);
      } else {
        refusals.push({ res, key, body });
      }
    }
    expect(refusals.length, 'no submit was refused within 200 tries').toBeGreaterThan(0);
    for (const { res } of refusals) {
      expect(res.status, res.text).toBe(507);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body.status).toBe(507);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(accepted.length).toBeGreaterThan(5);

    // A refused submit leaves nothing behind: every listed task is an accepted one with its job.
    const listed = await a.http('GET', '/v1/jobs?limit=100');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.tasks.map((t: { taskId: string }) => t.taskId).sort()).toEqual(
      [...accepted].sort(),
    );
    const counts = await a.tasks.counts();
    expect(counts.waiting + counts.prioritized).toBe(accepted.length);

    // What was accepted stays readable while full.
    for (const id of [accepted[0], accepted[1], accepted.at(-2), accepted.at(-1)] as string[]) {
      const res = await a.http('GET', `/v1/jobs/${id}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.taskId).toBe(id);
    }
    const last = await a.http('GET', `/v1/jobs/${accepted.at(-1)}`);
    expect(last.body.status).toBe('working');

    await conn.config('SET', 'maxmemory', '0');
    const again = await a.http('POST', '/v1/jobs', { body: { type: 'echo', input: { pad } } });
    expect(again.status, again.text).toBe(202);
    expect((await a.http('GET', `/v1/jobs/${again.body.taskId}`)).status).toBe(200);
    // Retrying a refused submit with its Idempotency-Key now creates the task and its job.
    const { key, body } = refusals[0]!;
    const retried = await a.http('POST', '/v1/jobs', { body, headers: { 'idempotency-key': key } });
    expect(retried.status, retried.text).toBe(202);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(await a.tasks.queueFor('echo').getJob(retried.body.taskId)).toBeTruthy();
  });

  it('refuses one submit bigger than the room left, storing nothing, not even its key', async () => {
    const redis = await privateRedis({ dir: tempDir() });
    const a = await api(redis.url);
    const conn = admin(redis.url);
    const warm = await a.http('POST', '/v1/jobs', { body: { type: 'echo', input: {} } });
    expect(warm.status, warm.text).toBe(202);

    // Room for a third of the record: refused as a whole (Redis checks memory before the first
    // write of a script), so no record, index entry or Idempotency-Key may remain.
    const used = Number(/^used_memory:(\d+)/m.exec(await conn.info('memory'))?.[1]);
    await conn.config('SET', 'maxmemory', String(used + 300_000));
    const key = randomUUID();
    const body = { type: 'echo', input: { pad: 'y'.repeat(900_000) } };
    const refused = await a.http('POST', '/v1/jobs', { body, headers: { 'idempotency-key': key } });
    expect(refused.status, refused.text).toBe(507);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    // Without a key (and without a cap) record and job are sent together: neither may remain.
    const plain = await a.http('POST', '/v1/jobs', { body });
    expect(plain.status, plain.text).toBe(507);

    const listed = await a.http('GET', '/v1/jobs?limit=100');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([warm.body.taskId]);
    const counts = await a.tasks.counts();
    expect(counts.waiting + counts.prioritized).toBe(1);

    await conn.config('SET', 'maxmemory', '0');
    const retried = await a.http('POST', '/v1/jobs', { body, headers: { 'idempotency-key': key } });
    expect(retried.status, retried.text).toBe(202);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(await a.tasks.queueFor('echo').getJob(retried.body.taskId)).toBeTruthy();
  });
});

describe('Redis is slow', () => {
  it('answers 503 within the Redis deadline while Redis is blocked, then recovers', async () => {
    const redis = await privateRedis({ dir: tempDir(), args: ['--enable-debug-command', 'yes'] });
    const a = await api(redis.url);
    const created = await a.http('POST', '/v1/jobs', { body: { type: 'echo', input: {} } });
    expect(created.status, created.text).toBe(202);
    const id = created.body.taskId as string;

    const blocker = admin(redis.url);
    await blocker.ping();
    const slept = blocker.call('DEBUG', 'SLEEP', '3').then(
      () => 'done',
      (error: Error) => error.message,
    );
    await sleep(200); // let Redis start sleeping before the request arrives

    const [get, getMs] = await timed(() => a.http('GET', `/v1/jobs/${id}`));
    // A submit that times out must not leave a task behind once Redis runs the late command.
    const lateSubmit = await a.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: { late: 1 } },
    });
    expect(lateSubmit.status, lateSubmit.text).toBe(503);
    expect(get.status, get.text).toBe(503);
    expect(get.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(getMs, `answered in ${getMs} ms`).toBeLessThan(2500);

    expect(await slept).toBe('done');
    const back = await waitFor(
      async () => {
        const res = await a.http('GET', `/v1/jobs/${id}`);
        return res.status === 200 ? res : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'GET to answer 200 again' },
    );
    expect(back.body.taskId).toBe(id);
    const listed = await a.http('GET', '/v1/jobs?limit=100');
    expect(listed.body.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([id]);
    const counts = await a.tasks.counts();
    expect(counts.waiting + counts.prioritized).toBe(1); // prioritized under fair share
    const post = await a.http('POST', '/v1/jobs', { body: { type: 'echo', input: {} } });
    expect(post.status, post.text).toBe(202);
  });
});
