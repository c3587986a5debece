import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { httpClient } from './helpers/http.js';
import { startApp, type Proc } from './helpers/processes.js';
import { API_KEYS, KEY_A, registerTypes, uniquePrefix } from './helpers/service.js';

// Issue 41, item 1: a worker key is an owner. The real API process on the real Redis; w1 owns
// its types, w2 tries every worker route on them and on w1's leases, w3 may register only the
// types its LONGRUN_WORKER_KEYS entry lists. `echo` is served by SDK workers (registered as an
// SDK worker's heartbeat registers it).

const W1_KEY = 'w1-owner-key-0123456789';
const W2_KEY = 'w2-other-key-0123456789';
const W3_KEY = 'w3-listed-key-0123456789';
const prefix = uniquePrefix();
let api: Proc;
let redis: Redis;
let tenant: ReturnType<typeof httpClient>;
let w1: ReturnType<typeof httpClient>;
let w2: ReturnType<typeof httpClient>;
let w3: ReturnType<typeof httpClient>;

const on = (leaseId: string, what: string) =>
  `/v1/worker/leases/${encodeURIComponent(leaseId)}/${what}`;
const SCHEMA = { type: 'object', properties: { text: { type: 'string' } } };

async function submit(type: string, input: unknown): Promise<string> {
  const res = await tenant('POST', '/v1/jobs', { body: { type, input } });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId as string;
}

beforeAll(async () => {
  redis = new Redis(inject('redisUrl'));
  await registerTypes(redis, prefix); // the stock types, as an SDK worker serves them
  api = await startApp('api', {
    REDIS_URL: inject('redisUrl'),
    LONGRUN_PREFIX: prefix,
    LONGRUN_API_KEYS: API_KEYS,
    LONGRUN_WORKER_KEYS: `w1:${W1_KEY},w2:${W2_KEY},w3:${W3_KEY}:w3-only|w3-too`,
    PORT: '0',
    HOST: '127.0.0.1',
  });
  const base = `http://127.0.0.1:${api.ready.port as number}`;
  tenant = httpClient(base, KEY_A);
  w1 = httpClient(base, W1_KEY);
  w2 = httpClient(base, W2_KEY);
  w3 = httpClient(base, W3_KEY);
  for (const name of ['wordcount', 'wordcount-shared']) {
    const reg = await w1('PUT', `/v1/worker/job-types/${name}`, {
      body: { inputSchema: SCHEMA, ...(name.endsWith('shared') ? { queue: 'w1-queue' } : {}) },
    });
    expect(reg.status, reg.text).toBe(200);
  }
}, 30_000);

afterAll(async () => {
  await api?.stop();
  await redis?.quit();
});

describe('a job type is owned by the first worker key to register it (issue 41, item 1)', () => {
  it("another key's PUT answers 409 job-type-owned, whatever it sends; the type is unchanged", async () => {
    const before = (await tenant('GET', '/v1/job-types')).body.jobTypes as { name: string }[];
    for (const name of ['wordcount', 'echo']) {
      for (const body of [
        { inputSchema: SCHEMA },
        { inputSchema: { not: {} } },
        { inputSchema: SCHEMA, queue: 'hijack' },
        { inputSchema: SCHEMA, concurrency: 1 },
      ]) {
        const res = await w2('PUT', `/v1/worker/job-types/${name}`, { body });
        expect(res.status, `${name} ${JSON.stringify(body)}`).toBe(409);
        expect(res.body.type).toBe('/problems/job-type-owned');
      }
    }
    // A type of its own on a queue w1's type runs on: that queue is w1's.
    const sharing = await w2('PUT', '/v1/worker/job-types/w2-sneak', {
      body: { inputSchema: SCHEMA, queue: 'w1-queue', concurrency: 1 },
    });
    expect(sharing.status).toBe(409);
    expect(sharing.body.type).toBe('/problems/job-type-owned');
    const after = (await tenant('GET', '/v1/job-types')).body.jobTypes as { name: string }[];
    expect(after).toEqual(before.map((t) => expect.objectContaining(t)));
    expect(after.map((t) => t.name)).not.toContain('w2-sneak');
    // Tenants' submits still go through the owners' schemas.
    await submit('echo', { text: 'still echo' });
    // The owner re-registers as before.
    expect(
      (await w1('PUT', '/v1/worker/job-types/wordcount', { body: { inputSchema: SCHEMA } })).status,
    ).toBe(200);
  });

  it("another key cannot lease an owner's types (403) nor act on its leases (404)", async () => {
    const id = await submit('wordcount', { text: 'mine' });
    for (const types of [['wordcount'], ['echo'], ['wordcount-shared', 'wordcount']]) {
      const res = await w2('POST', '/v1/worker/leases', { body: { types, waitMs: 0 } });
      expect(res.status, JSON.stringify(types)).toBe(403);
      expect(res.body.type).toBe('/problems/job-type-owned');
    }
    // Nor may an HTTP worker lease the SDK workers' `echo`.
    const echo = await w1('POST', '/v1/worker/leases', { body: { types: ['echo'] } });
    expect(echo.status).toBe(403);
    const leased = await w1('POST', '/v1/worker/leases', {
      body: { types: ['wordcount'], waitMs: 5000 },
    });
    expect(leased.body.leases).toHaveLength(1);
    const { leaseId } = leased.body.leases[0] as { leaseId: string };
    for (const [what, body] of [
      ['heartbeat', { progress: 5 }],
      ['complete', { result: 'w2' }],
      ['fail', { error: { code: 'x', message: 'x' }, retry: false }],
      ['input', { message: 'which?', schema: { type: 'object' } }],
    ] as const) {
      const res = await w2('POST', on(leaseId, what), { body });
      expect(res.status, `${what} ${res.text}`).toBe(404);
      expect(res.body.type).toBe('/problems/lease-not-found');
    }
    const stolen = await w2('POST', '/v1/worker/leases', {
      body: { types: ['w2-none'], completions: [{ leaseId, result: 'w2' }] },
    });
    expect(stolen.status).toBe(400); // its type is unknown: nothing completed
    expect((await tenant('GET', `/v1/jobs/${id}`)).body.status).toBe('working');
    const done = await w1('POST', on(leaseId, 'complete'), { body: { result: 'w1' } });
    expect(done.body).toEqual({ taskId: id, status: 'completed' });
  });

  it('a key whose LONGRUN_WORKER_KEYS entry lists types registers only those (403 job-type-not-allowed)', async () => {
    const other = await w3('PUT', '/v1/worker/job-types/w3-other', {
      body: { inputSchema: SCHEMA },
    });
    expect(other.status).toBe(403);
    expect(other.body.type).toBe('/problems/job-type-not-allowed');
    const listed = await w3('PUT', '/v1/worker/job-types/w3-only', {
      body: { inputSchema: SCHEMA },
    });
    expect(listed.status).toBe(200);
  });

  it('DELETE removes a type for its owner only, and only with no task waiting (204, 409, 403)', async () => {
    const reg = await w1('PUT', '/v1/worker/job-types/short-lived', {
      body: { inputSchema: SCHEMA },
    });
    expect(reg.status).toBe(200);
    const id = await submit('short-lived', { text: 'waiting' });
    const notOwner = await w2('DELETE', '/v1/worker/job-types/short-lived');
    expect(notOwner.status).toBe(403);
    expect(notOwner.body.type).toBe('/problems/job-type-owned');
    expect((await w2('DELETE', '/v1/worker/job-types/echo')).status).toBe(403);
    const busy = await w1('DELETE', '/v1/worker/job-types/short-lived');
    expect(busy.status).toBe(409);
    expect(busy.body.type).toBe('/problems/job-type-in-use');
    expect((await tenant('POST', `/v1/jobs/${id}/cancel`)).status).toBe(200);
    const removed = await w1('DELETE', '/v1/worker/job-types/short-lived');
    expect(removed.status, removed.text).toBe(204);
    const types = (await tenant('GET', '/v1/job-types')).body.jobTypes as { name: string }[];
    expect(types.map((t) => t.name)).not.toContain('short-lived');
    const refused = await tenant('POST', '/v1/jobs', {
      body: { type: 'short-lived', input: { text: 'x' } },
    });
    expect(refused.status).toBe(400);
    // Free again: another key may register it now.
    const taken = await w2('PUT', '/v1/worker/job-types/short-lived', {
      body: { inputSchema: SCHEMA },
    });
    expect(taken.status).toBe(200);
  });
});
