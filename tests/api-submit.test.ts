import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient } from './helpers/http.js';
import { KEY_A, KEY_B, startInProcessApi, type InProcessApi } from './helpers/service.js';

let api: InProcessApi;
beforeAll(async () => {
  api = await startInProcessApi({ pollIntervalMs: 2500, maxTtlMs: 3_600_000 });
});
afterAll(() => api.close());

// A random v4 UUID, or on a shard past the first a v8 one naming its shard (decision 37).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[48][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function jobCount(): Promise<number> {
  // Every shard's queues (one unless the suite runs with LONGRUN_SHARDS).
  const all = await Promise.all(api.parts.shards.map((s) => s.jobs.counts()));
  return all.flatMap((counts) => Object.values(counts)).reduce((a, b) => a + b, 0);
}

describe('POST /v1/jobs', () => {
  it('answers 202 with Location, Retry-After and the handle, after storing the job', async () => {
    const res = await api.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: { hello: 'world' } },
    });
    expect(res.status).toBe(202);
    expect(res.body.taskId).toMatch(UUID);
    expect(res.headers.get('location')).toBe(`/v1/jobs/${res.body.taskId}`);
    expect(res.headers.get('retry-after')).toBe('3'); // ceil(2500 / 1000)
    expect(res.body).toMatchObject({
      resultType: 'task',
      type: 'echo',
      status: 'working',
      ttlMs: 86_400_000,
      pollIntervalMs: 2500,
    });
    expect(Date.parse(res.body.createdAt)).toBeGreaterThan(Date.now() - 10_000);
    expect(res.body.lastUpdatedAt).toBe(res.body.createdAt);
    // Stored: the BullMQ job exists under the task id, and the handle is readable.
    expect(
      await api.parts.shardOf(res.body.taskId).jobs.queueFor('echo').getJob(res.body.taskId),
    ).toBeTruthy();
    const get = await api.http('GET', `/v1/jobs/${res.body.taskId}`);
    expect(get.status).toBe(200);
    expect(get.body.taskId).toBe(res.body.taskId);
  });

  it('gives different, random ids to identical submissions without a key', async () => {
    const a = await api.http('POST', '/v1/jobs', { body: { type: 'echo' } });
    const b = await api.http('POST', '/v1/jobs', { body: { type: 'echo' } });
    expect(a.body.taskId).not.toBe(b.body.taskId);
  });

  it.each([
    [{ type: 'echo', ttl: 5000 }, 400, 'ttl'],
    [{ type: 'nope' }, 400, 'type'],
    [{ input: {} }, 400, 'type'],
    [{ type: 'echo', ttlMs: 999 }, 400, 'ttlMs'],
    [{ type: 'echo', ttlMs: 3_600_001 }, 400, 'ttlMs'],
    [{ type: 'echo', ttlMs: 1500.5 }, 400, 'ttlMs'],
    [{ type: 'echo', input: 'x' }, 400, 'input'],
    [{ type: 'sleep', input: { ms: -1 } }, 422, 'input.ms'],
    [{ type: 'sleep', input: { ms: 3_600_001 } }, 422, 'input.ms'],
    [{ type: 'sleep', input: {} }, 422, 'input.ms'],
    [{ type: 'sleep', input: { ms: 5, extra: 1 } }, 422, 'input.extra'],
    [{ type: 'approval', input: { question: 42 } }, 422, 'input.question'],
    [{ type: 'fail', input: {} }, 422, 'input.message'],
  ])('rejects %o with %i naming %s, storing nothing', async (body, status, field) => {
    const before = await jobCount();
    const res = await api.http('POST', '/v1/jobs', { body });
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body.status).toBe(status);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    expect(await jobCount()).toBe(before);
  });

  it('answers 415 to a body that is not application/json', async () => {
    const res = await api.http('POST', '/v1/jobs', {
      raw: '{"type":"echo"}',
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(415);
    const none = await api.http('POST', '/v1/jobs', { raw: '{"type":"echo"}' });
    expect(none.status).toBe(415);
  });

  it('answers 400 to malformed JSON and to a JSON body that is not an object', async () => {
    expect(
      (
        await api.http('POST', '/v1/jobs', {
          raw: '{"type":',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await api.http('POST', '/v1/jobs', {
          raw: '[1,2]',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await api.http('POST', '/v1/jobs', {
          raw: '"x"',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
  });

  it('answers 413 above 1 MiB and accepts just below it', async () => {
    const big = await api.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: { pad: 'x'.repeat(1024 * 1024) } },
    });
    expect(big.status).toBe(413);
    expect(big.headers.get('content-type')).toMatch(/problem\+json/);
    const ok = await api.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: { pad: 'x'.repeat(1000 * 1000) } },
    });
    expect(ok.status).toBe(202);
  });
});

describe('idempotency', () => {
  it('returns the same handle for the same key and body, and enqueues once', async () => {
    const key = randomUUID();
    const body = { type: 'sleep', input: { ms: 10 } };
    const before = await jobCount();
    const first = await api.http('POST', '/v1/jobs', { body, headers: { 'idempotency-key': key } });
    const again = await api.http('POST', '/v1/jobs', {
      body: { input: { ms: 10 }, type: 'sleep' }, // same body, other key order
      headers: { 'idempotency-key': key },
    });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body.taskId).toBe(first.body.taskId);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await jobCount()).toBe(before + 1);
  });

  it('answers 422 to the same key with a different body', async () => {
    const key = randomUUID();
    await api.http('POST', '/v1/jobs', {
      body: { type: 'sleep', input: { ms: 10 } },
      headers: { 'idempotency-key': key },
    });
    const res = await api.http('POST', '/v1/jobs', {
      body: { type: 'sleep', input: { ms: 11 } },
      headers: { 'idempotency-key': key },
    });
    expect(res.status).toBe(422);
    expect(res.body.type).toMatch(/idempotency-key-reused/);
  });

  it('scopes keys per tenant', async () => {
    const key = randomUUID();
    const body = { type: 'echo', input: { n: 1 } };
    const a = await api.http('POST', '/v1/jobs', { body, headers: { 'idempotency-key': key } });
    const b = await httpClient(api.url, KEY_B)('POST', '/v1/jobs', {
      body,
      headers: { 'idempotency-key': key },
    });
    expect(b.status).toBe(202);
    expect(b.body.taskId).not.toBe(a.body.taskId);
  });

  it('gives each of many concurrent identical requests the one handle', async () => {
    const key = randomUUID();
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        api.http('POST', '/v1/jobs', {
          body: { type: 'echo', input: { c: 1 } },
          headers: { 'idempotency-key': key },
        }),
      ),
    );
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([202]));
    expect(new Set(results.map((r) => r.body.taskId)).size).toBe(1);
  });

  it('rejects an invalid Idempotency-Key with 400', async () => {
    const res = await api.http('POST', '/v1/jobs', {
      body: { type: 'echo' },
      headers: { 'idempotency-key': 'x'.repeat(300) },
    });
    expect(res.status).toBe(400);
  });
});

describe('GET /v1/jobs', () => {
  it('pages through the caller’s tasks newest first without gaps or repeats', async () => {
    const fresh = await startInProcessApi();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        ids.push(
          (await fresh.http('POST', '/v1/jobs', { body: { type: 'echo', input: { i } } })).body
            .taskId,
        );
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const q: string = cursor ? `?limit=3&cursor=${cursor}` : '?limit=3';
        const page = await fresh.http('GET', `/v1/jobs${q}`);
        expect(page.status).toBe(200);
        expect(page.body.tasks.length).toBeLessThanOrEqual(3);
        seen.push(...page.body.tasks.map((t: { taskId: string }) => t.taskId));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual([...ids].reverse());
      const working = await fresh.http('GET', '/v1/jobs?status=working&limit=100');
      expect(working.body.tasks).toHaveLength(7);
      const done = await fresh.http('GET', '/v1/jobs?status=completed');
      expect(done.body.tasks).toHaveLength(0);
    } finally {
      await fresh.close();
    }
  });

  it.each([
    'limit=0',
    'limit=101',
    'limit=abc',
    'status=done',
    'cursor=%2F%2F',
    'cursor=AAAA',
    'foo=1',
    'limit=1&limit=2',
  ])('answers 400 to ?%s', async (query) => {
    const res = await api.http('GET', `/v1/jobs?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.errors.length).toBeGreaterThan(0);
  });
});

describe('routes', () => {
  it('answers unknown routes with a problem 404', async () => {
    const res = await api.http('GET', '/v2/nothing');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
  });

  it('answers GET / with an index pointing to the docs, the document and the API', async () => {
    const res = await api.http('GET', '/', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.links).toMatchObject({
      docs: '/docs',
      openapi: '/openapi.json',
      jobs: '/v1/jobs',
    });
    // Every link it gives is served.
    for (const href of ['/docs', '/openapi.json']) {
      expect((await api.http('GET', href, { key: null })).status, href).toBe(200);
    }
  });

  it('answers a wrong method on a known path with 405, Allow and a problem', async () => {
    const id = randomUUID();
    for (const [method, path, allow] of [
      ['PUT', '/v1/jobs', 'GET, HEAD, POST'],
      ['DELETE', '/v1/jobs/', 'GET, HEAD, POST'],
      ['PATCH', `/v1/jobs/${id}`, 'DELETE, GET, HEAD'],
      ['GET', `/v1/jobs/${id}/cancel`, 'POST'],
      ['PUT', '/v1/schedules', 'GET, HEAD, POST'],
      ['POST', '/healthz', 'GET, HEAD'],
      ['DELETE', '/openapi.json', 'GET, HEAD'],
      ['POST', '/', 'GET, HEAD'],
    ] as const) {
      const res = await api.http(method, path, { body: method === 'GET' ? undefined : {} });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get('allow'), `${method} ${path}`).toBe(allow);
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
      expect(res.body.type).toMatch(/method-not-allowed$/);
      expect(res.body.detail).toContain(allow);
    }
    // An unknown path stays 404 whatever the method.
    expect((await api.http('PUT', '/v1/nothing', { body: {} })).status).toBe(404);
  });
});

describe('the JSON body', () => {
  /** POSTs raw bytes as tenant alpha, with `headers` over `content-type: application/json`. */
  const post = async (body: string | Uint8Array, headers: Record<string, string> = {}) => {
    const res = await fetch(`${api.url}/v1/jobs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', ...headers },
      body,
    });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
  };
  const codeOf = (res: { body: Record<string, unknown> }) => String(res.body.type).split('/').pop();
  const echo = (input: unknown) => JSON.stringify({ type: 'echo', input });

  it('is read as UTF-8, whole, with or without a byte order mark or a charset', async () => {
    const input = { text: 'héllo ✓ 👩‍💻 \u0000 "q"', n: 1 };
    for (const [body, headers] of [
      [echo(input), {}],
      [`\ufeff${echo(input)}`, {}],
      [` \n${echo(input)}\t`, { 'content-type': 'application/json; charset=UTF-8' }],
      [Buffer.from(echo(input)), { 'content-type': 'application/json;charset=utf-8' }],
    ] as const) {
      const res = await post(body, headers);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      const id = res.body.taskId as string;
      const task = await api.parts.shardOf(id).store.get(id); // any shard, as the suite runs
      expect(task?.input).toEqual(input);
    }
  });

  it('must be an object or an array (strict JSON), else 400 entity-parse-failed', async () => {
    for (const body of ['"a string"', '42', 'null', '   ', '{"type":', '{"a":1}x']) {
      const res = await post(body);
      expect([body, res.status, codeOf(res)]).toEqual([body, 400, 'entity-parse-failed']);
    }
    const array = await post('[1]');
    expect([array.status, codeOf(array)]).toEqual([400, 'invalid-request']);
  });

  it('is refused past 64 levels, however short, plain or compressed', async () => {
    const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
    const deepest = await post(nested(64)); // 128 bytes: deep enough, and only an array
    expect([deepest.status, codeOf(deepest)]).toEqual([400, 'invalid-request']);
    const deeper = await post(nested(65)); // 130 bytes
    expect([deeper.status, codeOf(deeper)]).toEqual([400, 'too-deep']);
    const zipped = gzipSync(nested(500));
    expect(zipped.length).toBeLessThan(130);
    const compressed = await post(zipped, { 'content-encoding': 'gzip' });
    expect([compressed.status, codeOf(compressed)]).toEqual([400, 'too-deep']);
  });
});
