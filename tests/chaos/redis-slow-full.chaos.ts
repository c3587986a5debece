// Reliability 4: a full and a slow Redis under load (private redis-servers; see also
// tests/redis-fault.test.ts for the one-request versions).
// Full: maxmemory reached (noeviction) during a burst of concurrent submits → only 202/503/507, a
// refusal stores nothing, nothing stored is lost, and refused submits succeed on retry once there is
// room. Slow: DEBUG SLEEP in a loop while an open-loop load (a fixed arrival rate, whatever the
// answers) hits the API process → every request answers within a bound derived from
// LONGRUN_REDIS_TIMEOUT_MS, 503s instead of a pile-up, the API's memory stays bounded.
// Sizes: CHAOS_SCALE, or CHAOS_FULL_BURST / CHAOS_SLOW_SECONDS.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  API_KEYS,
  KEY_A,
  registerTypes,
  startInProcessApi,
  startWorker,
  uniquePrefix,
} from '../helpers/service.js';
import {
  adminRedis,
  Cleanups,
  keepAliveAgent,
  closeBooks,
  idemKey,
  mb,
  NetError,
  percentiles,
  pool,
  privateRedis,
  rawRequest,
  report,
  rssBytes,
  scaled,
  secondsSince,
  startApiProcess,
  summary,
  Tally,
  tempDir,
  COUNT_RUNS,
} from './helpers.js';

const BURST = scaled('FULL_BURST', 2000, 300);
const SLOW_SECONDS = scaled('SLOW_SECONDS', 10, 3);
const SLOW_RATE = 200; // requests per second, open loop
const REDIS_TIMEOUT_MS = 500;

const cleanups = new Cleanups();
afterEach(() => cleanups.run());

describe('Redis is full during a submit burst', () => {
  it(`${BURST} concurrent submits into a Redis at maxmemory: only 202/503/507, nothing lost`, async () => {
    const started = performance.now();
    const redis = await privateRedis(cleanups, { dir: tempDir(cleanups, 'full') });
    const api = await startInProcessApi({ redisUrl: redis.url, redisTimeoutMs: 1000 });
    cleanups.add(() => api.close());
    const admin = adminRedis(cleanups, redis.url);
    const agent = keepAliveAgent(cleanups, 50);

    const warm = await rawRequest(api.url, {
      method: 'POST',
      path: '/v1/jobs',
      key: KEY_A,
      body: { type: 'echo', input: {} },
      agent,
    });
    expect(warm.status, warm.text).toBe(202);
    const used = Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))?.[1]);
    await admin.config('SET', 'maxmemory', String(used + 4 * 1024 * 1024));

    const pad = 'p'.repeat(8 * 1024);
    const statuses = new Tally();
    const accepted: string[] = [warm.body.taskId];
    const refused: { key: string; body: unknown }[] = [];
    const unexpected: string[] = [];
    await pool(
      Array.from({ length: BURST }, (_, i) => i),
      50,
      async (i) => {
        const key = idemKey();
        const body = { type: 'echo', input: { i, pad } };
        try {
          const res = await rawRequest(api.url, {
            method: 'POST',
            path: '/v1/jobs',
            key: KEY_A,
            body,
            headers: { 'idempotency-key': key },
            agent,
          });
          statuses.add(res.status);
          if (res.status === 202) accepted.push(res.body.taskId);
          else if (res.status === 503 || res.status === 507) refused.push({ key, body });
          else unexpected.push(`${res.status} ${res.text}`);
        } catch (error) {
          unexpected.push(`network ${(error as NetError).code}`);
        }
      },
    );

    // While still full: every accepted task is stored with its job, nothing else is.
    const whileFull = await closeBooks(admin, api.prefix, accepted, { timeoutMs: 0 });
    const counts = await api.tasks.counts();
    const sample = await rawRequest(api.url, {
      path: `/v1/jobs/${accepted.at(-1)}`,
      key: KEY_A,
      agent,
    });

    // Room again: refused submits are retried with their key; a worker drains everything.
    await admin.config('SET', 'maxmemory', '0');
    let replayed = 0;
    for (const { key, body } of refused) {
      const res = await rawRequest(api.url, {
        method: 'POST',
        path: '/v1/jobs',
        key: KEY_A,
        body,
        headers: { 'idempotency-key': key },
        agent,
      });
      expect(res.status, res.text).toBe(202);
      if (res.headers['idempotent-replayed'] === 'true') replayed += 1;
      accepted.push(res.body.taskId);
    }
    const worker = await startWorker(api.prefix, {
      ...COUNT_RUNS,
      REDIS_URL: redis.url,
      LONGRUN_WORKER_CONCURRENCY: '32',
    });
    cleanups.add(() => worker.kill());
    const books = await closeBooks(admin, api.prefix, accepted, { timeoutMs: 120_000 });

    report('redis-full-burst', {
      burst: BURST,
      statuses: statuses.counts,
      acceptedWhileFull: whileFull.accepted,
      storedWithoutAck: whileFull.unacknowledged,
      lostWhileFull: whileFull.lost,
      jobsQueuedWhileFull: counts.waiting + counts.prioritized,
      refusedThenRetriedOk: refused.length,
      refusedButStored: replayed,
      ...summary(books),
      seconds: secondsSince(started),
    });

    expect(unexpected, unexpected.slice(0, 5).join('\n')).toEqual([]);
    expect(statuses.get(507), 'maxmemory was never reached').toBeGreaterThan(0);
    for (const code of statuses.keys()) expect(['202', '503', '507']).toContain(code);
    expect(whileFull.lost).toBe(0);
    expect(whileFull.unacknowledged, 'a refused submit left a task behind').toBe(0);
    expect(counts.waiting + counts.prioritized).toBe(whileFull.accepted);
    expect(sample.status).toBe(200);
    expect(books.lost).toBe(0);
    expect(books.completed).toBe(books.accepted);
    expect(books.terminalTwice).toBe(0);
    expect(books.unacknowledged).toBe(0);
  });
});

describe('Redis is slow under load', () => {
  it(`DEBUG SLEEP loop under ${SLOW_RATE} req/s for ${SLOW_SECONDS} s: bounded latency, 503s, no pile-up`, async () => {
    const started = performance.now();
    const redis = await privateRedis(cleanups, {
      dir: tempDir(cleanups, 'slow'),
      args: ['--enable-debug-command', 'yes'],
    });
    const admin = adminRedis(cleanups, redis.url);
    const prefix = uniquePrefix();
    // No worker runs here: the job types are registered as one would have (decision 25).
    await registerTypes(admin, prefix);
    const api = await startApiProcess(cleanups, {
      REDIS_URL: redis.url,
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
      LONGRUN_REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
    });
    const agent = keepAliveAgent(cleanups);

    // Warm-up with Redis fast, and a few tasks to poll.
    const seeded: string[] = [];
    for (let i = 0; i < 300; i++) {
      const res = await rawRequest(api.url, {
        method: 'POST',
        path: '/v1/jobs',
        key: KEY_A,
        body: { type: 'echo', input: { seed: i } },
        agent,
      });
      expect(res.status, res.text).toBe(202);
      seeded.push(res.body.taskId);
    }
    const rssBefore = rssBytes(api.child.pid!);

    let slow = true;
    let sleeps = 0;
    const blocker = adminRedis(cleanups, redis.url);
    const blocking = (async () => {
      while (slow) {
        // Blocked 3× longer than the API waits, with short breathers in between.
        await blocker.call('DEBUG', 'SLEEP', String((3 * REDIS_TIMEOUT_MS) / 1000));
        sleeps += 1;
        await sleep(100);
      }
    })();

    const statuses = new Tally();
    const errors = new Tally();
    const latencies: number[] = [];
    const accepted: string[] = [...seeded];
    const refused: { key: string; body: unknown }[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    let peakRss = rssBefore;
    const rssTimer = setInterval(() => {
      peakRss = Math.max(peakRss, rssBytes(api.child.pid!));
    }, 250);
    cleanups.add(() => clearInterval(rssTimer));

    const one = async (i: number) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const started = performance.now();
      try {
        if (i % 2 === 0) {
          const res = await rawRequest(api.url, {
            path: `/v1/jobs/${seeded[i % seeded.length]}`,
            key: KEY_A,
            agent,
            timeoutMs: 30_000,
          });
          statuses.add(`GET ${res.status}`);
        } else {
          const key = idemKey();
          const body = { type: 'echo', input: { i } };
          const res = await rawRequest(api.url, {
            method: 'POST',
            path: '/v1/jobs',
            key: KEY_A,
            body,
            headers: { 'idempotency-key': key },
            agent,
            timeoutMs: 30_000,
          });
          statuses.add(`POST ${res.status}`);
          if (res.status === 202) accepted.push(res.body.taskId);
          if (res.status === 503) refused.push({ key, body });
        }
      } catch (error) {
        errors.add((error as NetError).code);
      } finally {
        latencies.push(performance.now() - started);
        inFlight -= 1;
      }
    };
    const requests: Promise<void>[] = [];
    const total = SLOW_RATE * SLOW_SECONDS;
    const loadStarted = performance.now();
    for (let i = 0; i < total; i++) {
      // Open loop: the i-th request leaves at its scheduled time, whatever came back so far.
      const due = loadStarted + (i * 1000) / SLOW_RATE - performance.now();
      if (due > 0) await sleep(due);
      requests.push(one(i));
    }
    await Promise.all(requests);
    slow = false;
    await blocking;
    await sleep(500);
    const rssAfter = rssBytes(api.child.pid!);

    // Redis fast again: retry the refused submits, then drain everything with a worker.
    for (const { key, body } of refused) {
      const res = await rawRequest(api.url, {
        method: 'POST',
        path: '/v1/jobs',
        key: KEY_A,
        body,
        headers: { 'idempotency-key': key },
        agent,
      });
      expect(res.status, res.text).toBe(202);
      accepted.push(res.body.taskId);
    }
    const worker = await startWorker(prefix, {
      ...COUNT_RUNS,
      REDIS_URL: redis.url,
      LONGRUN_WORKER_CONCURRENCY: '32',
    });
    cleanups.add(() => worker.kill());
    const books = await closeBooks(admin, prefix, accepted, { timeoutMs: 120_000 });

    const latency = percentiles(latencies);
    // A submit may wait on Redis three times (create, enqueue, and the discard after a timeout).
    const bound = 3 * REDIS_TIMEOUT_MS + 2000;
    report('redis-slow-load', {
      rate: SLOW_RATE,
      seconds: SLOW_SECONDS,
      debugSleeps: sleeps,
      requests: latencies.length,
      statuses: statuses.counts,
      networkErrors: errors.counts,
      latencyMs: latency,
      boundMs: bound,
      maxInFlight,
      rssMiB: { before: mb(rssBefore), peak: mb(peakRss), after: mb(rssAfter) },
      ...summary(books),
      totalSeconds: secondsSince(started),
    });

    expect(errors.counts).toEqual({});
    for (const code of statuses.keys()) {
      expect(['GET 200', 'GET 503', 'POST 202', 'POST 503']).toContain(code);
    }
    expect(
      statuses.get('GET 503') + statuses.get('POST 503'),
      'Redis never looked slow',
    ).toBeGreaterThan(0);
    expect(latency.max, `slowest answer ${latency.max} ms`).toBeLessThan(bound);
    expect(peakRss - rssBefore, 'API memory grew like a pile-up').toBeLessThan(200 * 1024 * 1024);
    expect(books.lost).toBe(0);
    expect(books.unfinished).toBe(0);
    expect(books.completed).toBe(books.accepted);
    expect(books.terminalTwice).toBe(0);
    expect(books.unacknowledged, 'a 503 left a task behind').toBe(0);
  });
});
