// Reliability 6b: slow clients (slowloris) against the API process, which sets headersTimeout 10 s
// and requestTimeout 30 s (apps/api/src/main.ts). Sockets that dribble headers, dribble a body, or
// say nothing must be closed by the server within those timeouts (Node checks them every
// connectionsCheckingInterval, 30 s by default, so the bound is timeout + 30 s), while normal
// requests keep being served and nothing is stored from a body that never arrived.
// Takes about a minute whatever the scale: not for `npm test`.
// Sizes: CHAOS_SCALE, or CHAOS_SLOWLORIS_SOCKETS (per kind).
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { API_KEYS, KEY_A, registerTypes, uniquePrefix } from '../helpers/service.js';
import {
  Cleanups,
  closeBooks,
  rawExchange,
  rawRequest,
  report,
  scaled,
  secondsSince,
  startApiProcess,
  Tally,
  type RawExchange,
} from './helpers.js';

const SOCKETS = scaled('SLOWLORIS_SOCKETS', 200, 20);
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** Node's default connectionsCheckingInterval, plus scheduling slack. */
const CHECK_SLACK_MS = 30_000 + 5000;

const cleanups = new Cleanups();
afterAll(() => cleanups.run());

describe('slow clients', () => {
  it(`${SOCKETS} sockets each dribbling headers, dribbling a body, or idle: closed by the server`, async () => {
    const started = performance.now();
    const prefix = uniquePrefix();
    const redis = new Redis(inject('redisUrl'));
    cleanups.add(() => redis.quit());
    // No worker runs here: the job types are registered as one would have (decision 25).
    await registerTypes(redis, prefix);
    const api = await startApiProcess(cleanups, {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
    });

    const headerDribble = Array.from({ length: 60 }, (_, i) => `X-Slow-${i}: y\r\n`);
    const slowHeaders = Array.from({ length: SOCKETS }, () =>
      rawExchange(api.port, ['GET /v1/jobs HTTP/1.1\r\nHost: x\r\n', ...headerDribble], {
        gapMs: 2000,
        untilClose: true,
        timeoutMs: HEADERS_TIMEOUT_MS + CHECK_SLACK_MS,
      }),
    );
    const head =
      `POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"type":"echo","input":{"a":"';
    const bodyDribble = Array.from({ length: 60 }, () => 'xxxxxxxxxx');
    const slowBodies = Array.from({ length: SOCKETS }, () =>
      rawExchange(api.port, [head, ...bodyDribble], {
        gapMs: 2000,
        untilClose: true,
        timeoutMs: REQUEST_TIMEOUT_MS + CHECK_SLACK_MS,
      }),
    );
    const idle = Array.from({ length: SOCKETS }, () =>
      rawExchange(api.port, [], {
        untilClose: true,
        timeoutMs: HEADERS_TIMEOUT_MS + CHECK_SLACK_MS,
      }),
    );

    // Meanwhile, ordinary clients are served.
    const normal = new Tally();
    const accepted: string[] = [];
    let attacking = true;
    const all = Promise.all([...slowHeaders, ...slowBodies, ...idle]).finally(() => {
      attacking = false;
    });
    while (attacking) {
      const health = await rawRequest(api.url, { path: '/healthz', agent: false, timeoutMs: 5000 })
        .then((r) => r.status)
        .catch(() => 'error');
      normal.add(`healthz ${health}`);
      const submit = await rawRequest(api.url, {
        method: 'POST',
        path: '/v1/jobs',
        key: KEY_A,
        body: { type: 'echo', input: {} },
        agent: false,
        timeoutMs: 5000,
      }).catch(() => undefined);
      normal.add(`submit ${submit?.status ?? 'error'}`);
      if (submit?.status === 202) accepted.push(submit.body.taskId);
      await sleep(1000);
    }
    await all;

    const summarise = (results: RawExchange[]) => ({
      closedByServer: results.filter((r) => r.closed).length,
      answered: new Tally(),
      closeMs: {
        min: Math.round(Math.min(...results.map((r) => r.ms))),
        max: Math.round(Math.max(...results.map((r) => r.ms))),
      },
    });
    const kinds = {
      slowHeaders: await Promise.all(slowHeaders),
      slowBodies: await Promise.all(slowBodies),
      idle: await Promise.all(idle),
    };
    const figures = Object.fromEntries(
      Object.entries(kinds).map(([kind, results]) => {
        const s = summarise(results);
        for (const r of results) s.answered.add(r.status ?? 'none');
        return [kind, { ...s, answered: s.answered.counts }];
      }),
    );
    const books = await closeBooks(redis, prefix, accepted, { timeoutMs: 0 });
    report('slowloris', {
      socketsPerKind: SOCKETS,
      ...figures,
      normalRequests: normal.counts,
      storedWithoutAck: books.unacknowledged,
      seconds: secondsSince(started),
    });

    for (const [kind, results] of Object.entries(kinds)) {
      const open = results.filter((r) => !r.closed).length;
      expect(open, `${kind}: sockets still open at the bound`).toBe(0);
      for (const r of results) expect(r.status ?? 408, kind).toBeLessThan(500);
    }
    for (const key of normal.keys()) expect(key).toMatch(/^(healthz 200|submit 202)$/);
    expect(books.unacknowledged, 'a body that never arrived stored a task').toBe(0);
    expect(api.child.exitCode).toBeNull();
  });
});
