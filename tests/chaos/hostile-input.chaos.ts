// Reliability 6: hostile input against the in-process API (real app, real socket, real Redis).
// Property-based (fast-check) over bodies, headers, ids, query strings and idempotency keys, plus
// hand-picked nasties (oversized and deeply nested bodies, prototype-pollution keys, unicode junk).
// Invariants: only 2xx/4xx, never 5xx, never a crash, and no stored task without a 202.
// Cheap on purpose (well under 30 s) so it can run in `npm test`. Slow clients (slowloris) need the
// API as a process with its server timeouts: see slowloris.chaos.ts.
import { Agent } from 'node:http';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { KEY_A, KEY_B, startInProcessApi, type InProcessApi } from '../helpers/service.js';
import {
  Cleanups,
  rawExchange,
  pct,
  rawRequest,
  readBooks,
  report,
  scaled,
  Tally,
  type RawResponse,
} from './helpers.js';

const RUNS = scaled('HOSTILE_RUNS', 150, 20);
const cleanups = new Cleanups();
const agent = new Agent({ keepAlive: true, maxSockets: 8, timeout: 4000 });
const statuses = new Tally();
/** Every task id a 202 named: the only tasks allowed to exist under the prefix. */
const accepted = new Set<string>();
let api: InProcessApi;
let port: number;
let redis: Redis;
let foreignId: string; // tenant beta's task, probed with alpha's key
let keySerial = 0;

beforeAll(async () => {
  api = await startInProcessApi({ pollIntervalMs: 1000 });
  cleanups.add(() => api.close());
  port = Number(new URL(api.url).port);
  redis = new Redis(inject('redisUrl'));
  cleanups.add(() => redis.quit());
  cleanups.add(() => agent.destroy());
  const created = await send({
    method: 'POST',
    path: '/v1/jobs',
    key: KEY_B,
    body: { type: 'echo', input: { owner: 'beta' } },
  });
  expect(created.status, created.text).toBe(202);
  foreignId = created.body.taskId;
});

afterAll(async () => {
  report('hostile-input', {
    runsPerProperty: RUNS,
    statuses: statuses.counts,
    accepted: accepted.size,
  });
  await cleanups.run();
});

/** Sends a request and checks the invariant every answer must meet. */
async function send(opts: Parameters<typeof rawRequest>[1]): Promise<RawResponse> {
  const res = await rawRequest(api.url, { agent, timeoutMs: 10_000, ...opts });
  statuses.add(res.status);
  if (res.status === 202 && typeof res.body?.taskId === 'string') accepted.add(res.body.taskId);
  expect(
    res.status,
    `${opts.method ?? 'GET'} ${opts.path} → ${res.text.slice(0, 300)}`,
  ).toBeLessThan(500);
  expect(res.status).toBeGreaterThanOrEqual(200);
  return res;
}

/**
 * Tasks indexed under the prefix (all tenants) and jobs queued: both may only grow with 202s.
 * The tenant index drops the entries of expired tasks as creates go by (issue 27), and the
 * property tests submit ttls from one second, so tasks are compared as sets: what a request
 * added, and what it took away (only tasks whose record has expired may leave).
 */
async function stored(): Promise<{ records: Set<string>; jobs: number }> {
  // Every shard's (one unless the suite runs with LONGRUN_SHARDS).
  const perShard = await Promise.all(
    api.parts.shards.map(async (shard) => {
      const [alpha, beta, counts] = await Promise.all([
        redis.zrange(`${shard.prefix}:tenant:alpha:tasks`, 0, -1),
        redis.zrange(`${shard.prefix}:tenant:beta:tasks`, 0, -1),
        shard.jobs.counts(),
      ]);
      const ids = [...alpha, ...beta].map(
        (m) => `${shard.prefix}:task:${m.slice(m.indexOf(':') + 1)}`,
      );
      return { records: ids, jobs: counts.waiting + counts.prioritized + counts.delayed };
    }),
  );
  return {
    records: new Set(perShard.flatMap((s) => s.records)),
    jobs: perShard.reduce((n, s) => n + s.jobs, 0),
  };
}

/** What a request changed: the tasks it added, and those that left while their record lives. */
async function change(
  before: { records: Set<string>; jobs: number },
  after: { records: Set<string>; jobs: number },
): Promise<{ added: number; lostLive: string[]; jobs: number }> {
  const added = [...after.records].filter((k) => !before.records.has(k)).length;
  const left = [...before.records].filter((k) => !after.records.has(k));
  const lostLive: string[] = [];
  for (const key of left) if ((await redis.exists(key)) === 1) lostLive.push(key);
  return { added, lostLive, jobs: after.jobs - before.jobs };
}

/** POSTs a body; when it is refused, nothing new may be stored. */
async function submitChecked(
  opts: Omit<Parameters<typeof rawRequest>[1], 'path'>,
): Promise<RawResponse> {
  const before = await stored();
  const res = await send({ method: 'POST', path: '/v1/jobs', key: KEY_A, ...opts });
  const delta = await change(before, await stored());
  if (res.status === 202 && res.headers['idempotent-replayed'] !== 'true') {
    expect(delta).toEqual({ added: 1, lostLive: [], jobs: 1 });
  } else {
    expect(delta, `answered ${res.status}: nothing may be stored`).toEqual({
      added: 0,
      lostLive: [],
      jobs: 0,
    });
  }
  return res;
}

const anyString = fc.string({ unit: 'binary', maxLength: 40 });
const junkKey = fc.oneof(
  anyString,
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', ''),
);
const jsonJunk = fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' });
const jobType = fc.oneof(
  fc.constantFrom('echo', 'sleep', 'fail', 'approval', 'ECHO', ' echo', 'echo\u0000', '__proto__'),
  anyString,
);
const envelope = fc.record(
  {
    type: jobType,
    input: fc.oneof(fc.dictionary(junkKey, jsonJunk, { maxKeys: 5 }), jsonJunk),
    ttlMs: fc.oneof(
      fc.integer({ min: -10, max: 10_000_000_000 }),
      fc.double(),
      fc.constantFrom('60000', null, true, 1e308, -0),
    ),
    callback: fc.oneof(
      fc.record(
        {
          url: fc.oneof(
            anyString,
            fc.constantFrom(
              'http://127.0.0.1/x',
              'https://[::1]/',
              'file:///etc/passwd',
              'https://hook.example.invalid/x',
            ),
          ),
          secret: anyString,
        },
        { requiredKeys: [] },
      ),
      jsonJunk,
    ),
    [`__proto__`]: jsonJunk,
    extra: jsonJunk,
  },
  { requiredKeys: [] },
);
/** Valid submissions, so the accepted paths are exercised too. */
const validSubmit = fc.oneof(
  fc.record({ type: fc.constant('echo'), input: fc.dictionary(junkKey, jsonJunk, { maxKeys: 4 }) }),
  fc.record({
    type: fc.constant('sleep'),
    input: fc.record({ ms: fc.integer({ min: 0, max: 3_600_000 }) }),
  }),
  fc.record({
    type: fc.constant('fail'),
    input: fc.record({ message: fc.string({ minLength: 1, unit: 'binary' }) }),
  }),
  fc.record({
    type: fc.constant('approval'),
    input: fc.record({ question: fc.string({ minLength: 1, unit: 'binary' }) }),
    ttlMs: fc.integer({ min: 1000, max: 604_800_000 }),
  }),
);

describe('hostile input: property-based', () => {
  it('any JSON body to POST /v1/jobs: 2xx/4xx, and a refusal stores nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(envelope, validSubmit, jsonJunk), async (body) => {
        await submitChecked({ body });
      }),
      { numRuns: RUNS },
    );
  });

  it('any bytes with any content type and encoding: 2xx/4xx, a refusal stores nothing', async () => {
    const contentType = fc.oneof(
      fc.constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'application/json; charset=utf-16',
        'application/json; charset=latin1',
        'application/json; charset=nonsense',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        '',
      ),
      fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
    );
    const encoding = fc.constantFrom(
      undefined,
      'gzip',
      'deflate',
      'br',
      'identity',
      'x-junk',
      'gzip, gzip',
    );
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 2048 }).map((a) => Buffer.from(a)),
      fc.string({ unit: 'binary' }).map((s) => Buffer.from(s)),
      fc.jsonValue().map((v) => Buffer.from(`\ufeff${JSON.stringify(v)}`)),
      fc.constantFrom(
        Buffer.from('{"type":"echo","input":{}'),
        Buffer.from('{"type":"echo","input":{"a":"\\ud800"}}'),
        Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
        Buffer.from('{"type":"echo","input":{"a":1},"type":"sleep"}'),
        Buffer.from('null'),
        Buffer.from('"echo"'),
        Buffer.from('1e99999'),
      ),
    );
    await fc.assert(
      fc.asyncProperty(bytes, contentType, encoding, async (raw, type, enc) => {
        const headers: Record<string, string> = {};
        if (type) headers['content-type'] = type;
        if (enc) headers['content-encoding'] = enc;
        await submitChecked({ raw, headers });
      }),
      { numRuns: RUNS },
    );
  });

  it('any Idempotency-Key: valid keys replay or 422, invalid ones are 400, nothing else stored', async () => {
    const headerChar = fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c));
    const key = fc.oneof(
      fc.string({ unit: headerChar, minLength: 0, maxLength: 300 }),
      fc.string({
        unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
        minLength: 1,
        maxLength: 255,
      }),
      fc.constantFrom('__proto__', 'constructor', 'a'.repeat(255), 'a'.repeat(256), ' k ', '%00'),
    );
    const input = fc.dictionary(junkKey, jsonJunk, { maxKeys: 3 });
    await fc.assert(
      fc.asyncProperty(key, input, input, fc.boolean(), async (k, first, second, same) => {
        // A unique suffix keeps runs independent (keys live for the task's ttl); a key that is
        // too long already stays as it is (and must be refused).
        const suffix = `-${++keySerial}`;
        const unique = k.length > 255 ? k : `${k.slice(0, 255 - suffix.length)}${suffix}`;
        // HTTP strips only spaces and tabs around a header value (not NBSP, which JS trim() does).
        const valid = /^[\x21-\x7e]{1,255}$/.test(unique.replace(/^[ \t]+|[ \t]+$/g, ''));
        const headers = { 'idempotency-key': unique };
        const a = await submitChecked({ headers, body: { type: 'echo', input: first } });
        if (!valid) {
          expect(a.status, a.text).toBe(400);
          return;
        }
        expect(a.status, a.text).toBe(202);
        const bodyB = { type: 'echo', input: same ? first : second };
        const b = await submitChecked({ headers, body: bodyB });
        const sameBody = same || canonical(first) === canonical(second);
        if (sameBody) {
          expect(b.status, b.text).toBe(202);
          expect(b.body.taskId).toBe(a.body.taskId);
          expect(b.headers['idempotent-replayed']).toBe('true');
        } else {
          expect(b.status, b.text).toBe(422);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('any task id on every task route: 404 for what is not yours, never 5xx, foreign task untouched', async () => {
    const id = fc.oneof(
      fc.uuid(),
      anyString.filter((x) => x.length > 0),
      fc.constantFrom(
        foreignId,
        foreignId.toUpperCase(),
        `${foreignId} `,
        '..',
        '.',
        '%00',
        '%zz',
        '%E0%A4%A',
        '%',
        '%2e%2e',
        'a'.repeat(10_000),
        '00000000-0000-0000-0000-000000000000',
      ),
    );
    const route = fc.constantFrom(
      ['GET', ''],
      ['GET', '/result'],
      ['GET', '/result?wait=0'],
      ['GET', '/events'],
      ['POST', '/cancel'],
      ['POST', '/input'],
      ['DELETE', ''],
    );
    await fc.assert(
      fc.asyncProperty(id, route, fc.boolean(), async (raw, [method, suffix], encode) => {
        const segment = encode ? pct(raw) : raw.replace(/[^\x21-\x7e]|[?#/]/g, (c) => pct(c));
        const res = await send({
          method,
          path: `/v1/jobs/${segment}${suffix}`,
          key: KEY_A,
          ...(method === 'POST' ? { body: { input: { approved: true } } } : {}),
        });
        expect([400, 404]).toContain(res.status);
      }),
      { numRuns: RUNS },
    );
    const foreign = await send({ path: `/v1/jobs/${foreignId}`, key: KEY_B });
    expect(foreign.status).toBe(200);
    expect(foreign.body.status).toBe('working');
    expect(foreign.body.statusMessage).toBe('queued');
  });

  it('any query string on the list and result routes: 200/400/409 only', async () => {
    const own = await send({
      method: 'POST',
      path: '/v1/jobs',
      key: KEY_A,
      body: { type: 'sleep', input: { ms: 1 } },
    });
    expect(own.status).toBe(202);
    const value = fc.oneof(
      anyString,
      fc.integer().map(String),
      fc.constantFrom(
        '1e400',
        '-0',
        '0x10',
        'NaN',
        'Infinity',
        '%zz',
        '%',
        '1.5',
        '100',
        '101',
        '0',
        'working',
        'completed',
        'constructor',
        '__proto__',
      ),
    );
    const query = fc.array(
      fc.tuple(
        fc.oneof(junkKey, fc.constantFrom('status', 'limit', 'cursor', 'wait', 'lastEventId')),
        value,
      ),
      { maxLength: 5 },
    );
    await fc.assert(
      fc.asyncProperty(query, fc.boolean(), fc.boolean(), async (pairs, encode, onResult) => {
        const qs = pairs
          // A `wait` the API accepts (it coerces like Number(): '0x10' is 16) would hold the
          // request that many seconds; keep the property fast.
          .map(([k, v]): [string, string] => [
            k,
            k === 'wait' && Number(v) > 0 && Number(v) <= 30 ? '0' : v,
          ])
          .map(([k, v]) =>
            encode
              ? `${pct(k)}=${pct(v)}`
              : `${k}=${v}`.replace(/[^\x21-\x7e]|[#]/g, (c) => pct(c)),
          )
          .join('&');
        const path = onResult ? `/v1/jobs/${own.body.taskId}/result?${qs}` : `/v1/jobs?${qs}`;
        const res = await send({ path, key: KEY_A });
        expect([200, 400, 409]).toContain(res.status);
      }),
      { numRuns: RUNS },
    );
  });

  it('any Authorization header and any raw request line or header bytes: never 5xx', async () => {
    const headerValue = fc.string({
      unit: fc
        .integer({ min: 0x20, max: 0xff })
        .filter((c) => c !== 0x7f)
        .map((c) => String.fromCharCode(c)),
      maxLength: 600,
    });
    await fc.assert(
      fc.asyncProperty(
        headerValue,
        fc.constantFrom('/v1/jobs', '/v1/jobs/' + foreignId, '/metrics', '/healthz'),
        async (auth, path) => {
          const res = await send({ path, headers: { authorization: auth } });
          if (path.startsWith('/v1/')) expect(res.status).toBe(401);
        },
      ),
      { numRuns: RUNS },
    );
    const line = fc.string({ unit: 'binary-ascii', maxLength: 200 });
    await fc.assert(
      fc.asyncProperty(
        line,
        line,
        fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'G\u0000T', 'BREW'),
        async (path, header, method) => {
          const before = await stored();
          const out = await rawExchange(port, [
            Buffer.from(
              `${method} /v1/jobs${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\nX-Junk: ${header}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
              'latin1',
            ),
          ]);
          if (out.status !== undefined) {
            statuses.add(out.status);
            expect(out.status, out.received.slice(0, 200)).toBeLessThan(500);
          }
          expect(await change(before, await stored())).toEqual({
            added: 0,
            lostLive: [],
            jobs: 0,
          });
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('hostile input: hand-picked', () => {
  it('oversized bodies are 413, by Content-Length and by streamed length, storing nothing', async () => {
    const input = { pad: 'x'.repeat(1024 * 1024) };
    const big = await submitChecked({ body: { type: 'echo', input } });
    expect(big.status).toBe(413);
    // Chunked, no length: 20 MiB streamed; refused once past the limit.
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const chunks: Buffer[] = [
      Buffer.from(
        `POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      ),
    ];
    for (let i = 0; i < 320; i++)
      chunks.push(
        Buffer.concat([
          Buffer.from(`${chunk.length.toString(16)}\r\n`),
          chunk,
          Buffer.from('\r\n'),
        ]),
      );
    chunks.push(Buffer.from('0\r\n\r\n'));
    const streamed = await rawExchange(port, chunks, { timeoutMs: 20_000 });
    expect(streamed.status).toBe(413);
  });

  it('deeply nested JSON (100 000 levels) is refused with 4xx, storing nothing', async () => {
    const depth = scaled('HOSTILE_DEPTH', 100_000, 100_000);
    const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const top = await submitChecked({
      raw: nested,
      headers: { 'content-type': 'application/json' },
    });
    expect(top.status).toBe(400);
    for (const d of [1_000, 10_000, depth]) {
      const deep = `${'['.repeat(d)}${']'.repeat(d)}`;
      const res = await submitChecked({
        raw: `{"type":"echo","input":{"deep":${deep}}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(
        res.status,
        `input nested ${d} deep → ${res.status} ${res.text.slice(0, 200)}`,
      ).toBeLessThan(500);
      const obj = `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`;
      const res2 = await submitChecked({
        raw: `{"type":"echo","input":${obj}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(res2.status, `input object nested ${d} deep → ${res2.status}`).toBeLessThan(500);
    }
  });

  it('bodies that do not decode and paths that do not unescape are 4xx', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      for (const raw of [Buffer.alloc(0), Buffer.from('{"type":"echo","input":{}}')]) {
        const res = await submitChecked({
          raw,
          headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        });
        expect(res.status, `${encoding} ${raw.length} bytes`).toBeGreaterThanOrEqual(400);
      }
    }
    for (const path of ['/v1/jobs/%zz', '/v1/jobs/%', '/v1/jobs/%E0%A4%A/result']) {
      const res = await send({ path, key: KEY_A });
      expect([400, 404], path).toContain(res.status);
    }
  });

  it('prototype-pollution keys pollute nothing and are never 5xx', async () => {
    const bodies = [
      '{"__proto__":{"polluted":"yes"},"type":"echo","input":{}}',
      '{"type":"echo","input":{"__proto__":{"polluted":"yes"}}}',
      '{"type":"echo","input":{"constructor":{"prototype":{"polluted":"yes"}}}}',
      '{"type":"echo","constructor":{"prototype":{"polluted":"yes"}},"input":{}}',
      '{"type":"approval","input":{"question":"q","__proto__":{"isAdmin":true}}}',
      '{"type":"echo","input":{"a":1},"callback":{"url":"https://hook.example.invalid/","__proto__":{"polluted":"yes"}}}',
    ];
    for (const raw of bodies) {
      await submitChecked({ raw, headers: { 'content-type': 'application/json' } });
      await submitChecked({
        raw,
        headers: {
          'content-type': 'application/json',
          'idempotency-key': `proto-${raw.length}-${Math.random()}`,
        },
      });
    }
    const list = await send({
      path: '/v1/jobs?__proto__[polluted]=yes&constructor[prototype][polluted]=yes',
      key: KEY_A,
    });
    expect(list.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('unicode junk in bodies, types, keys and paths: never 5xx', async () => {
    const junk = [
      '\u0000',
      '\ud800',
      '\udfff',
      '\ufeff',
      '\u202e',
      'e\u0301'.repeat(500),
      '💥'.repeat(1000),
      '\uffff',
      '𝕏',
    ];
    for (const j of junk) {
      await submitChecked({ body: { type: j, input: {} } });
      await submitChecked({ body: { type: 'echo', input: { [j]: j } } });
      await submitChecked({ body: { type: 'fail', input: { message: j } } });
      await send({ path: `/v1/jobs/${pct(j)}`, key: KEY_A });
      await send({ path: `/v1/jobs?status=${pct(j)}`, key: KEY_A });
    }
    // Escaped lone surrogates survive as JSON escapes.
    await submitChecked({
      raw: '{"type":"echo","input":{"\\ud800":"\\udc00\\ud800"}}',
      headers: { 'content-type': 'application/json' },
    });
    // Invalid UTF-8 bytes, overlong encodings, UTF-16 with a BOM.
    await submitChecked({
      raw: Buffer.from([0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x3a, 0x31, 0x7d]),
      headers: { 'content-type': 'application/json' },
    });
    await submitChecked({
      raw: Buffer.from('\ufeff{"type":"echo","input":{}}', 'utf16le'),
      headers: { 'content-type': 'application/json; charset=utf-16' },
    });
  });

  it('stored exactly what was accepted; the server is alive', async () => {
    const health = await send({ path: '/healthz' });
    expect(health.status).toBe(200);
    const books = await readBooks(redis, api.prefix, accepted);
    expect(books.unacknowledged, 'task records that no 202 acknowledged').toBe(0);
    // A short ttlMs (>= 1 s) may have expired a few; none may be missing otherwise.
    expect(books.lost).toBeLessThanOrEqual(books.accepted);
    expect((await stored()).jobs).toBe(accepted.size);
    report('hostile-input-books', {
      accepted: accepted.size,
      unacknowledged: books.unacknowledged,
      expiredByTtl: books.lost,
    });
  });
});

/** What the server hashes: the input as zod's record parse returns it (top-level `__proto__` dropped). */
function canonical(input: Record<string, unknown>): string {
  const copy = Object.fromEntries(Object.entries(input).filter(([k]) => k !== '__proto__'));
  return JSON.stringify(sortKeys(copy));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
  );
}
