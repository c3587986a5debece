import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { httpClient, type HttpResult } from './helpers/http.js';
import { startApp, type Proc } from './helpers/processes.js';
import { API_KEYS, KEY_A, KEY_B, uniquePrefix } from './helpers/service.js';

// Issue 41, items 2, 3, 6 and 7: a lease id is checked before anything is built from it. The
// real API process on the real Redis, driven over HTTP with two worker keys.

const W1_KEY = 'w1-worker-key-0123456789';
const W2_KEY = 'w2-worker-key-0123456789';
const prefix = uniquePrefix();
let api: Proc;
let redis: Redis;
let tenant: ReturnType<typeof httpClient>;
let beta: ReturnType<typeof httpClient>;
let w1: ReturnType<typeof httpClient>;
let w2: ReturnType<typeof httpClient>;

const b64 = (text: string) => Buffer.from(text).toString('base64url');
const on = (leaseId: string, what: string) =>
  `/v1/worker/leases/${encodeURIComponent(leaseId)}/${what}`;

async function submit(type: string, input: unknown, as = tenant): Promise<string> {
  const res = await as('POST', '/v1/jobs', { body: { type, input } });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId as string;
}

async function leaseOne(type: string, as = w1): Promise<{ leaseId: string; taskId: string }> {
  const res = await as('POST', '/v1/worker/leases', { body: { types: [type], waitMs: 5000 } });
  expect(res.status, res.text).toBe(200);
  expect(res.body.leases).toHaveLength(1);
  return res.body.leases[0] as { leaseId: string; taskId: string };
}

/** Redis's connected clients, and those named for a BullMQ queue under this test's prefix. */
async function clients(): Promise<{ connected: number; ours: number }> {
  const info = await redis.info('clients');
  const connected = Number(/connected_clients:(\d+)/.exec(info)?.[1]);
  const list = (await redis.client('LIST')) as string;
  const ours = list.split('\n').filter((l) => l.includes(`name=${prefix}`)).length;
  return { connected, ours };
}

beforeAll(async () => {
  redis = new Redis(inject('redisUrl'));
  api = await startApp('api', {
    REDIS_URL: inject('redisUrl'),
    LONGRUN_PREFIX: prefix,
    LONGRUN_API_KEYS: API_KEYS,
    LONGRUN_WORKER_KEYS: `w1:${W1_KEY},w2:${W2_KEY}`,
    LONGRUN_WORKER_LEASE_MS: '5000',
    // The forged-heartbeat storm measures connections, not the per-key limit (item 5).
    LONGRUN_WORKER_RATE_LIMIT_RPS: '0',
    LOG_LEVEL: 'info',
    PORT: '0',
    HOST: '127.0.0.1',
  });
  const base = `http://127.0.0.1:${api.ready.port as number}`;
  tenant = httpClient(base, KEY_A);
  beta = httpClient(base, KEY_B);
  w1 = httpClient(base, W1_KEY);
  w2 = httpClient(base, W2_KEY);
  for (const [name, timeoutMs] of [
    ['ids-echo', undefined],
    ['ids-timed', 3000],
  ] as const) {
    const reg = await w1('PUT', `/v1/worker/job-types/${name}`, {
      body: { inputSchema: { type: 'object' }, ...(timeoutMs ? { timeoutMs } : {}) },
    });
    expect(reg.status, reg.text).toBe(200);
  }
}, 30_000);

afterAll(async () => {
  await api?.stop();
  await redis?.quit();
});

describe('a forged lease id (issue 41, item 2)', () => {
  it('answers 404 and opens no Redis connection or BullMQ worker: 200 heartbeats naming new queues', async () => {
    // Warm up: the API's own connections (and the lease queue of a real type) exist already.
    const id = await submit('ids-echo', {});
    const lease = await leaseOne('ids-echo');
    expect(lease.taskId).toBe(id);
    const before = await clients();
    const answers: HttpResult[] = [];
    for (let batch = 0; batch < 10; batch++) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            w1('POST', on(b64(`0\nforged-q-${batch}-${i}\n${id}\ntok`), 'heartbeat'), {
              body: {},
            }),
          ),
        )),
      );
    }
    const after = await clients();
    // Other tests share this Redis: a little drift, never one connection per forged queue.
    expect(after.connected - before.connected).toBeLessThan(20);
    expect(after.ours).toBeLessThanOrEqual(before.ours);
    expect(new Set(answers.map((a) => `${a.status} ${a.body?.type}`))).toEqual(
      new Set(['404 /problems/lease-not-found']),
    );
    expect((await w1('POST', on(lease.leaseId, 'complete'), { body: { result: 1 } })).status).toBe(
      200,
    );
  });
});

describe('a tampered lease id (issue 41, item 3)', () => {
  /** The lease id with line `at` of what it carries replaced (the format issue 41 found). */
  function tamper(leaseId: string, at: number, value: string): string {
    const raw = Buffer.from(leaseId, 'base64url').toString('utf8').split('\n');
    raw[at] = value;
    return b64(raw.join('\n'));
  }

  it('answers 404 whatever was changed: timeout, type, queue, shard, job; the real lease still completes', async () => {
    const id = await submit('ids-timed', { n: 1 });
    const lease = await leaseOne('ids-timed');
    const text = Buffer.from(lease.leaseId, 'base64url').toString('utf8').split('\n');
    const forged = [
      tamper(lease.leaseId, 6, '0'), // timeoutMs
      tamper(lease.leaseId, 4, 'attacker-label'), // type
      tamper(lease.leaseId, 1, 'tasks.other'), // queue
      tamper(lease.leaseId, 0, '1'), // shard
      text.length > 1 ? b64(text.slice(0, 4).join('\n')) : `${lease.leaseId}x`, // run dropped
      `${lease.leaseId.slice(0, -2)}${lease.leaseId.endsWith('AA') ? 'BB' : 'AA'}`, // the check itself
    ];
    for (const leaseId of forged) {
      for (const what of ['heartbeat', 'complete', 'fail', 'input']) {
        const body =
          what === 'complete'
            ? { result: 'forged' }
            : what === 'fail'
              ? { error: { code: 'x', message: 'forged' } }
              : what === 'input'
                ? { message: 'which?', schema: { type: 'object' } }
                : {};
        const res = await w1('POST', on(leaseId, what), { body });
        expect(res.status, `${what} ${res.text}`).toBe(404);
        expect(res.body.type).toBe('/problems/lease-not-found');
      }
    }
    // Sent with a lease call, a tampered completion is answered 404 too.
    const batched = await w1('POST', '/v1/worker/leases', {
      body: { types: ['ids-timed'], completions: [{ leaseId: forged[0], result: 'forged' }] },
    });
    expect(batched.body.completions[0].problem).toMatchObject({ status: 404 });
    const metrics = (await tenant('GET', '/metrics', { key: null })).text;
    expect(metrics).not.toContain('attacker-label');
    expect((await tenant('GET', `/v1/jobs/${id}`)).body.status).toBe('working');
    const done = await w1('POST', on(lease.leaseId, 'complete'), { body: { result: 'real' } });
    expect(done.body).toEqual({ taskId: id, status: 'completed' });
    expect((await tenant('GET', `/v1/jobs/${id}/result`)).body.result).toBe('real');
  });
});

describe('a lease the key does not hold (issue 41, item 6)', () => {
  it("answers 404, never 409 with the task's status: a forged id naming a real task, or another key's lease", async () => {
    const unfinished = await submit('ids-echo', { owner: 'beta' }, beta);
    const lease = await leaseOne('ids-echo');
    expect(lease.taskId).toBe(unfinished);
    const finished = await submit('ids-echo', { owner: 'beta' }, beta);
    expect((await beta('POST', `/v1/jobs/${finished}/cancel`)).status).toBe(200);
    for (const taskId of [unfinished, finished]) {
      const forged = b64(`0\ntasks.ids-echo\n${taskId}\nguessed-token`);
      for (const what of ['heartbeat', 'complete']) {
        const body = what === 'complete' ? { result: 1 } : {};
        const res = await w1('POST', on(forged, what), { body });
        expect(res.status, res.text).toBe(404);
        expect(res.body.taskStatus).toBeUndefined();
      }
    }
    // Another worker key's real lease: unknown to this key.
    for (const what of ['heartbeat', 'complete', 'fail']) {
      const body =
        what === 'fail'
          ? { error: { code: 'x', message: 'x' } }
          : what === 'complete'
            ? { result: 'w2' }
            : {};
      const res = await w2('POST', on(lease.leaseId, what), { body });
      expect(res.status, `${what} ${res.text}`).toBe(404);
      expect(res.body.taskStatus).toBeUndefined();
    }
    const done = await w1('POST', on(lease.leaseId, 'complete'), { body: { result: 'w1' } });
    expect(done.body).toEqual({ taskId: unfinished, status: 'completed' });
  });
});

describe('a complete sent twice (issue 41, item 7)', () => {
  it("answers the first completion's 200 again with the same result (409 with another)", async () => {
    const id = await submit('ids-echo', { n: 7 });
    const lease = await leaseOne('ids-echo');
    const first = await w1('POST', on(lease.leaseId, 'complete'), { body: { result: { n: 7 } } });
    expect(first.body).toEqual({ taskId: id, status: 'completed' });
    const again = await w1('POST', on(lease.leaseId, 'complete'), { body: { result: { n: 7 } } });
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual(first.body);
    // Sent again with a lease call, too.
    const batched = await w1('POST', '/v1/worker/leases', {
      body: { types: ['ids-echo'], completions: [{ leaseId: lease.leaseId, result: { n: 7 } }] },
    });
    expect(batched.body.completions[0]).toEqual({ leaseId: lease.leaseId, ...first.body });
    const other = await w1('POST', on(lease.leaseId, 'complete'), { body: { result: 8 } });
    expect(other.status).toBe(409);
    expect((await tenant('GET', `/v1/jobs/${id}/result`)).body.result).toEqual({ n: 7 });
  });

  it('the request log does not hold lease ids (they carry the lock token)', async () => {
    await submit('ids-echo', { n: 8 });
    const lease = await leaseOne('ids-echo');
    await w1('POST', on(lease.leaseId, 'heartbeat'), { body: {} });
    await w1('POST', on(lease.leaseId, 'complete'), { body: { result: 8 } });
    await new Promise((r) => setTimeout(r, 200));
    const requests = api.lines.filter((l) => l.includes('"msg":"request"'));
    const onLeases = requests.filter((l) => l.includes('/v1/worker/leases/'));
    expect(onLeases.length).toBeGreaterThanOrEqual(2);
    expect(api.lines.join('\n')).not.toContain(lease.leaseId);
    expect(onLeases.join('\n')).toContain('/v1/worker/leases/[redacted]/complete');
  });
});
