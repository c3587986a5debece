import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { httpClient, waitFor, type HttpResult } from './helpers/http.js';
import { startApp } from './helpers/processes.js';
import { API_KEYS, KEY_A, uniquePrefix } from './helpers/service.js';

// The HTTP worker protocol (issue 31, decision 62) end to end: the real API process on the real
// Redis, and examples/python-worker/worker.py run by the machine's python3 (standard library
// only). Other paths (fail, retry, 409 after cancel, the result cap, 403s) are driven here over
// plain HTTP with a worker key, on a type of their own so the Python worker never leases them.

const root = resolve(import.meta.dirname, '..');
const WORKER_KEY = 'py-worker-key-0123456789';
const OTHER_WORKER_KEY = 'curl-worker-key-0123456789';
const LEASE_MS = 2000;
const MAX_RESULT_BYTES = 2000;
const prefix = uniquePrefix();
const stops: (() => Promise<unknown>)[] = [];
let base = '';
let http: ReturnType<typeof httpClient>;
let worker: ReturnType<typeof httpClient>;

interface PyWorker {
  child: ChildProcess;
  lines: string[];
  events(): Record<string, unknown>[];
  exited: Promise<number | null>;
}

/** Starts the Python worker until it says it is ready (it registered `py-wordcount`). */
async function startPython(env: Record<string, string> = {}): Promise<PyWorker> {
  const child = spawn('python3', [resolve(root, 'examples/python-worker/worker.py')], {
    env: { ...process.env, LONGRUN_URL: base, LONGRUN_WORKER_KEY: WORKER_KEY, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => lines.push(line));
  }
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const proc: PyWorker = {
    child,
    lines,
    exited,
    events: () =>
      lines.flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
  };
  stops.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  await waitFor(async () => proc.events().find((e) => e.msg === 'worker ready'), {
    what: `python worker ready:\n${lines.join('\n')}`,
    timeoutMs: 15_000,
  });
  return proc;
}

const submit = async (type: string, input: unknown) => {
  const res = await http('POST', '/v1/jobs', { body: { type, input } });
  expect(res.status).toBe(202);
  return res.body.taskId as string;
};

async function until(id: string, what: string, check: (h: Record<string, unknown>) => boolean) {
  return waitFor(
    async () => {
      const h = (await http('GET', `/v1/jobs/${id}`)).body as Record<string, unknown>;
      return check(h) ? h : undefined;
    },
    { what: `${what} (task ${id})`, timeoutMs: 20_000 },
  );
}

/** One lease of `type` taken over HTTP with the worker key. */
async function leaseOne(type: string): Promise<Record<string, unknown>> {
  const res = await worker('POST', '/v1/worker/leases', {
    body: { types: [type], max: 1, waitMs: 5000 },
  });
  expect(res.status).toBe(200);
  expect(res.body.leases).toHaveLength(1);
  return res.body.leases[0] as Record<string, unknown>;
}

const onLease = (lease: Record<string, unknown>, what: string) =>
  `/v1/worker/leases/${encodeURIComponent(lease.leaseId as string)}/${what}`;

beforeAll(async () => {
  const api = await startApp('api', {
    REDIS_URL: inject('redisUrl'),
    LONGRUN_PREFIX: prefix,
    LONGRUN_API_KEYS: API_KEYS,
    LONGRUN_WORKER_KEYS: `py:${WORKER_KEY},curl:${OTHER_WORKER_KEY}`,
    LONGRUN_WORKER_LEASE_MS: String(LEASE_MS),
    LONGRUN_MAX_RESULT_BYTES: String(MAX_RESULT_BYTES),
    PORT: '0',
    HOST: '127.0.0.1',
  });
  stops.push(() => api.stop());
  base = `http://127.0.0.1:${api.ready.port as number}`;
  http = httpClient(base, KEY_A);
  worker = httpClient(base, OTHER_WORKER_KEY);
  // The type the HTTP-driven tests lease themselves: two attempts, no backoff to wait out.
  const registered = await worker('PUT', '/v1/worker/job-types/curl-echo', {
    body: {
      inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
      attempts: 2,
      backoffMs: 0,
    },
  });
  expect(registered.status).toBe(200);
}, 30_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
});

describe('the Python worker (examples/python-worker/worker.py)', () => {
  let py: PyWorker;
  beforeAll(async () => {
    py = await startPython({ WORKER_STEP_MS: '100', WORKER_WAIT_MS: '5000' });
  }, 20_000);

  it('registers py-wordcount: it is listed like an SDK worker type, with a live worker', async () => {
    const types = (await http('GET', '/v1/job-types')).body.jobTypes as Record<string, unknown>[];
    const type = types.find((t) => t.name === 'py-wordcount');
    expect(type).toMatchObject({ queue: 'tasks.py-wordcount', attempts: 1 });
    expect(type!.workers).toBeGreaterThanOrEqual(1);
    expect(type!.inputSchema).toMatchObject({ required: ['text'] });
    // The input is validated against the registered schema, as for an SDK type.
    const bad = await http('POST', '/v1/jobs', { body: { type: 'py-wordcount', input: { n: 1 } } });
    expect(bad.status).toBe(422);
  });

  it('counts the words, with progress on the handle while it runs', async () => {
    const id = await submit('py-wordcount', {
      text: 'the quick brown fox jumps over the lazy dog',
    });
    const running = await until(id, 'progress', (h) => typeof h.progress === 'number');
    expect(running.status).toBe('working');
    expect(running.statusMessage).toMatch(/^counted \d+ of 9$/);
    await until(id, 'completed', (h) => h.status === 'completed');
    const result = await http('GET', `/v1/jobs/${id}/result`);
    expect(result.body).toMatchObject({ status: 'completed', result: { words: 9 } });
    expect(py.events()).toContainEqual({ msg: 'completed', taskId: id, words: 9 });
  });

  it('asks for input when the text is empty; the answer comes with the next lease', async () => {
    const id = await submit('py-wordcount', { text: '' });
    const asked = await until(id, 'input_required', (h) => h.status === 'input_required');
    expect(asked.inputRequest).toMatchObject({ message: expect.stringMatching(/text is empty/) });
    // The answer is checked against the schema the worker sent.
    const wrong = await http('POST', `/v1/jobs/${id}/input`, { body: { input: { text: '' } } });
    expect(wrong.status).toBe(422);
    const answered = await http('POST', `/v1/jobs/${id}/input`, {
      body: { input: { text: 'one two three four' } },
    });
    expect(answered.status).toBe(200);
    await until(id, 'completed', (h) => h.status === 'completed');
    expect((await http('GET', `/v1/jobs/${id}/result`)).body.result).toEqual({ words: 4 });
    expect(py.events()).toContainEqual(
      expect.objectContaining({ msg: 'leased', taskId: id, answer: true }),
    );
  });

  it('stops a run whose task is cancelled (the heartbeat says cancelled)', async () => {
    const id = await submit('py-wordcount', { text: 'word '.repeat(200) });
    await until(id, 'progress', (h) => typeof h.progress === 'number');
    expect((await http('POST', `/v1/jobs/${id}/cancel`)).status).toBe(200);
    await waitFor(async () => py.events().find((e) => e.msg === 'cancelled' && e.taskId === id), {
      what: 'the worker to stop the cancelled run',
    });
    const after = (await http('GET', `/v1/jobs/${id}`)).body;
    expect(after.status).toBe('cancelled');
    expect(py.events()).not.toContainEqual(
      expect.objectContaining({ msg: 'completed', taskId: id }),
    );
  });

  it('counts its runs in the API metrics as SDK runs are counted', async () => {
    const metrics = (await http('GET', '/metrics', { key: null })).text;
    expect(metrics).toMatch(
      /longrun_jobs_processed_total\{type="py-wordcount",outcome="completed"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /longrun_jobs_processed_total\{type="py-wordcount",outcome="input_required"\} 1/,
    );
    expect(metrics).toMatch(
      /longrun_jobs_processed_total\{type="py-wordcount",outcome="cancelled"\} 1/,
    );
  });

  it('a lease not renewed expires: the job of a SIGKILLed worker completes on another, attempt + 1', async () => {
    const id = await submit('py-wordcount', { text: 'slow '.repeat(60) });
    await until(id, 'progress', (h) => typeof h.progress === 'number');
    const first = py.events().find((e) => e.msg === 'leased' && e.taskId === id);
    expect(first).toMatchObject({ attempt: 1 });
    py.child.kill('SIGKILL');
    await py.exited;
    const second = await startPython({ WORKER_STEP_MS: '10', WORKER_WAIT_MS: '5000' });
    await until(id, 'completed after the lease expired', (h) => h.status === 'completed');
    expect((await http('GET', `/v1/jobs/${id}/result`)).body.result).toEqual({ words: 60 });
    expect(second.events()).toContainEqual(
      expect.objectContaining({ msg: 'leased', taskId: id, attempt: 2 }),
    );
    expect(second.events()).toContainEqual({ msg: 'completed', taskId: id, words: 60 });
  }, 40_000);

  it('sends its results with its next lease call; with WORKER_BATCH=0 through …/complete, one call each', async () => {
    const completes = async () => {
      const metrics = (await http('GET', '/metrics', { key: null })).text;
      const line =
        /longrun_http_request_duration_seconds_count\{method="POST",route="\/v1\/worker\/leases\/:leaseId\/complete",status="200"\} (\d+)/;
      return Number(line.exec(metrics)?.[1] ?? 0);
    };
    const before = await completes();
    const one = await startPython({ WORKER_BATCH: '0', WORKER_MAX: '4', WORKER_WAIT_MS: '5000' });
    const ids = await Promise.all(
      Array.from({ length: 8 }, (_, i) => submit('py-wordcount', { text: `w `.repeat(i + 1) })),
    );
    for (const id of ids) await until(id, 'completed', (h) => h.status === 'completed');
    const byOne = one.events().filter((e) => e.msg === 'completed').length;
    expect(byOne).toBeGreaterThan(0); // both long-poll: each gets some of the 8
    // The other worker (batching) took the rest: none of its results went through …/complete.
    expect(await completes()).toBe(before + byOne);
    one.child.kill('SIGTERM');
    await one.exited;
  }, 40_000);
});

describe('the worker routes over HTTP', () => {
  it('a tenant key on /v1/worker/* and a worker key on the task routes are 403', async () => {
    const asTenant = await http('POST', '/v1/worker/leases', { body: { types: ['curl-echo'] } });
    expect(asTenant.status).toBe(403);
    expect(asTenant.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(asTenant.body.type).toBe('/problems/wrong-key');
    const register = await http('PUT', '/v1/worker/job-types/x', { body: { inputSchema: {} } });
    expect(register.status).toBe(403);
    for (const [method, path] of [
      ['POST', '/v1/jobs'],
      ['GET', '/v1/jobs'],
      ['GET', '/v1/job-types'],
    ] as const) {
      const res: HttpResult = await worker(method, path, {
        ...(method === 'POST' ? { body: { type: 'curl-echo', input: {} } } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.type).toBe('/problems/wrong-key');
    }
    const noKey = await worker('POST', '/v1/worker/leases', { key: null, body: { types: ['x'] } });
    expect(noKey.status).toBe(401);
  });

  it('refuses bad lease requests with 400, never 5xx', async () => {
    for (const body of [
      { types: [] },
      { types: ['curl-echo'], max: 101 },
      { types: ['curl-echo'], waitMs: 30_001 },
      { types: ['no-such-type'] },
      { types: ['curl-echo'], extra: 1 },
    ]) {
      const res = await worker('POST', '/v1/worker/leases', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.type).toBe('/problems/invalid-request');
    }
    // A JSON Schema ajv cannot compile is refused when sent, not when a submit or answer meets it.
    const badSchema = await worker('PUT', '/v1/worker/job-types/bad-schema', {
      body: { inputSchema: { type: 'no-such-type' } },
    });
    expect(badSchema.status).toBe(400);
    expect(badSchema.body.errors[0].path).toBe('inputSchema');
    const types = (await http('GET', '/v1/job-types')).body.jobTypes as { name: string }[];
    expect(types.map((t) => t.name)).not.toContain('bad-schema');
    const unknownLease = await worker('POST', '/v1/worker/leases/not-a-lease/heartbeat', {
      body: {},
    });
    expect(unknownLease.status).toBe(404);
  });

  it('an empty long poll answers after waitMs with no leases', async () => {
    const started = Date.now();
    const res = await worker('POST', '/v1/worker/leases', {
      body: { types: ['curl-echo'], waitMs: 300 },
    });
    expect(res.status).toBe(200);
    expect(res.body.leases).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('after a cancel the heartbeat says cancelled and complete answers 409', async () => {
    const id = await submit('curl-echo', { n: 1 });
    const lease = await leaseOne('curl-echo');
    expect(lease).toMatchObject({ taskId: id, type: 'curl-echo', input: { n: 1 }, attempt: 1 });
    const beat = await worker('POST', onLease(lease, 'heartbeat'), { body: { progress: 10 } });
    expect(beat.body).toEqual({ cancelled: false, leaseMs: LEASE_MS });
    expect((await http('GET', `/v1/jobs/${id}`)).body.progress).toBe(10);
    expect((await http('POST', `/v1/jobs/${id}/cancel`)).status).toBe(200);
    const after = await worker('POST', onLease(lease, 'heartbeat'), { body: {} });
    expect(after.status).toBe(200);
    expect(after.body.cancelled).toBe(true);
    const complete = await worker('POST', onLease(lease, 'complete'), { body: { result: 1 } });
    expect(complete.status).toBe(409);
    expect(complete.body).toMatchObject({ type: '/problems/lease-ended', taskStatus: 'cancelled' });
    expect((await http('GET', `/v1/jobs/${id}`)).body.status).toBe('cancelled');
  });

  it('a result over LONGRUN_MAX_RESULT_BYTES fails the task, as on SDK workers', async () => {
    for (const size of [MAX_RESULT_BYTES + 100, MAX_RESULT_BYTES + 200_000]) {
      const id = await submit('curl-echo', { n: size });
      const lease = await leaseOne('curl-echo');
      const res = await worker('POST', onLease(lease, 'complete'), {
        body: { result: { blob: 'x'.repeat(size) } },
      });
      expect(res.status, `${size} bytes`).toBe(422);
      expect(res.body.type).toBe('/problems/result-too-large');
      const handle = (await http('GET', `/v1/jobs/${id}`)).body;
      expect(handle.status).toBe('failed');
      const result = (await http('GET', `/v1/jobs/${id}/result`)).body;
      expect(result.error).toMatchObject({ code: 'result-too-large' });
    }
  });

  it('fail retries while attempts are left (attempt 2), then fails the task', async () => {
    const id = await submit('curl-echo', { n: 2 });
    const first = await leaseOne('curl-echo');
    const retried = await worker('POST', onLease(first, 'fail'), {
      body: { error: { code: 'flaky', message: 'try again' } },
    });
    expect(retried.body).toEqual({ taskId: id, status: 'working' });
    const second = await leaseOne('curl-echo');
    expect(second).toMatchObject({ taskId: id, attempt: 2 });
    // The first lease is over: its id no longer holds the job.
    const stale = await worker('POST', onLease(first, 'complete'), { body: { result: 1 } });
    expect(stale.status).toBe(409);
    const failed = await worker('POST', onLease(second, 'fail'), {
      body: { error: { code: 'flaky', message: 'still broken' } },
    });
    expect(failed.body).toEqual({ taskId: id, status: 'failed' });
    const result = (await http('GET', `/v1/jobs/${id}/result`)).body;
    expect(result).toMatchObject({
      status: 'failed',
      error: { code: 'flaky', message: 'still broken' },
    });
  });

  it('delays, priorities and a per-type rate limit apply to leases as to SDK workers', async () => {
    const reg = await worker('PUT', '/v1/worker/job-types/curl-limited', {
      body: { inputSchema: { type: 'object' }, rateLimit: { max: 1, durationMs: 60_000 } },
    });
    expect(reg.status).toBe(200);
    expect(reg.body.rateLimit).toEqual({ max: 1, durationMs: 60_000 });
    const a = await submit('curl-limited', {});
    await submit('curl-limited', {});
    const first = await worker('POST', '/v1/worker/leases', {
      body: { types: ['curl-limited'], max: 2 },
    });
    expect(first.body.leases.map((l: { taskId: string }) => l.taskId)).toEqual([a]);
    // One start per minute: the second job waits, whoever asks.
    const second = await worker('POST', '/v1/worker/leases', {
      body: { types: ['curl-limited'], max: 2, waitMs: 500 },
    });
    expect(second.body.leases).toEqual([]);

    // A delayed task is not leased before its time; the priority 1 task goes first.
    const later = (
      await http('POST', '/v1/jobs', {
        body: { type: 'curl-echo', input: { n: 10 }, delayMs: 60_000 },
      })
    ).body.taskId as string;
    const low = (
      await http('POST', '/v1/jobs', { body: { type: 'curl-echo', input: { n: 11 }, priority: 5 } })
    ).body.taskId as string;
    const high = (
      await http('POST', '/v1/jobs', { body: { type: 'curl-echo', input: { n: 12 }, priority: 1 } })
    ).body.taskId as string;
    const leased = await worker('POST', '/v1/worker/leases', {
      body: { types: ['curl-echo'], max: 3 },
    });
    const order = leased.body.leases.map((l: { taskId: string }) => l.taskId);
    expect(order).toEqual([high, low]);
    expect(order).not.toContain(later);
    for (const lease of leased.body.leases) {
      await worker('POST', onLease(lease, 'complete'), { body: { result: null } });
    }
    expect((await http('POST', `/v1/jobs/${later}/cancel`)).status).toBe(200);
  });

  it("a registered concurrency caps the runs under way across workers (BullMQ's global concurrency)", async () => {
    const reg = await worker('PUT', '/v1/worker/job-types/curl-one-at-a-time', {
      body: { inputSchema: { type: 'object' }, concurrency: 1 },
    });
    expect(reg.status).toBe(200);
    const [a, b] = [await submit('curl-one-at-a-time', {}), await submit('curl-one-at-a-time', {})];
    const first = await worker('POST', '/v1/worker/leases', {
      body: { types: ['curl-one-at-a-time'], max: 2 },
    });
    expect(first.body.leases.map((l: { taskId: string }) => l.taskId)).toEqual([a]);
    const none = await worker('POST', '/v1/worker/leases', {
      body: { types: ['curl-one-at-a-time'], max: 2, waitMs: 300 },
    });
    expect(none.body.leases).toEqual([]);
    await worker('POST', onLease(first.body.leases[0], 'complete'), { body: { result: 1 } });
    const next = await worker('POST', '/v1/worker/leases', {
      body: { types: ['curl-one-at-a-time'], max: 2, waitMs: 5000 },
    });
    expect(next.body.leases.map((l: { taskId: string }) => l.taskId)).toEqual([b]);
  });

  it('a run past its timeoutMs fails at its next heartbeat (cancelled: true), as an SDK run times out', async () => {
    const reg = await worker('PUT', '/v1/worker/job-types/curl-slow', {
      body: { inputSchema: { type: 'object' }, timeoutMs: 300 },
    });
    expect(reg.status).toBe(200);
    const id = await submit('curl-slow', {});
    const lease = await leaseOne('curl-slow');
    await new Promise((r) => setTimeout(r, 500));
    const beat = await worker('POST', onLease(lease, 'heartbeat'), { body: { progress: 90 } });
    expect(beat.body).toEqual({ cancelled: true, leaseMs: LEASE_MS });
    const result = (await http('GET', `/v1/jobs/${id}/result`)).body;
    expect(result).toMatchObject({ status: 'failed', error: { code: 'timeout' } });
    const complete = await worker('POST', onLease(lease, 'complete'), { body: { result: 1 } });
    expect(complete.status).toBe(409);
  });

  it('an input request with a schema that cannot be compiled is a 400; the run goes on', async () => {
    const id = await submit('curl-echo', { n: 4 });
    const lease = await leaseOne('curl-echo');
    const bad = await worker('POST', onLease(lease, 'input'), {
      body: { message: 'which?', schema: { type: 'no-such-type' } },
    });
    expect(bad.status).toBe(400);
    expect((await http('GET', `/v1/jobs/${id}`)).body.status).toBe('working');
    const done = await worker('POST', onLease(lease, 'complete'), { body: { result: 4 } });
    expect(done.body).toEqual({ taskId: id, status: 'completed' });
  });

  it('a lease taken on one API replica is heartbeated and completed on another', async () => {
    const other = await startApp('api', {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
      LONGRUN_WORKER_KEYS: `curl:${OTHER_WORKER_KEY}`,
      LONGRUN_WORKER_LEASE_MS: String(LEASE_MS),
      PORT: '0',
      HOST: '127.0.0.1',
    });
    stops.push(() => other.stop());
    const elsewhere = httpClient(
      `http://127.0.0.1:${other.ready.port as number}`,
      OTHER_WORKER_KEY,
    );
    const id = await submit('curl-echo', { n: 5 });
    const lease = await leaseOne('curl-echo');
    const beat = await elsewhere('POST', onLease(lease, 'heartbeat'), { body: { progress: 40 } });
    expect(beat.body).toEqual({ cancelled: false, leaseMs: LEASE_MS });
    expect((await http('GET', `/v1/jobs/${id}`)).body.progress).toBe(40);
    const done = await elsewhere('POST', onLease(lease, 'complete'), { body: { result: 5 } });
    expect(done.body).toEqual({ taskId: id, status: 'completed' });
    expect((await http('GET', `/v1/jobs/${id}/result`)).body.result).toBe(5);
  }, 30_000);

  it('complete records the result; the lease is then over', async () => {
    const id = await submit('curl-echo', { n: 3 });
    const lease = await leaseOne('curl-echo');
    const done = await worker('POST', onLease(lease, 'complete'), { body: { result: { n: 3 } } });
    expect(done.body).toEqual({ taskId: id, status: 'completed' });
    expect((await http('GET', `/v1/jobs/${id}/result`)).body.result).toEqual({ n: 3 });
    const again = await worker('POST', onLease(lease, 'complete'), { body: { result: 4 } });
    expect(again.status).toBe(409);
  });
});

describe('completions sent with a lease call (decision 68)', () => {
  const lease = (body: Record<string, unknown>) => worker('POST', '/v1/worker/leases', { body });
  const ids = (leases: { taskId: string }[]) => leases.map((l) => l.taskId).sort();

  beforeAll(async () => {
    for (const name of ['curl-batch', 'curl-batch-other']) {
      const reg = await worker('PUT', `/v1/worker/job-types/${name}`, {
        body: { inputSchema: { type: 'object' } },
      });
      expect(reg.status).toBe(200);
    }
  });

  it('completes each run sent and leases the next in the same call; each answered in order', async () => {
    const [a, b, c] = [
      await submit('curl-batch', { n: 1 }),
      await submit('curl-batch', { n: 2 }),
      await submit('curl-batch', { n: 3 }),
    ];
    const first = await lease({ types: ['curl-batch'], max: 2 });
    expect(ids(first.body.leases)).toEqual([a, b].sort());
    const [la, lb] = first.body.leases as { leaseId: string; taskId: string }[];
    const next = await lease({
      types: ['curl-batch'],
      max: 2,
      completions: [
        { leaseId: la!.leaseId, result: { done: la!.taskId } },
        { leaseId: lb!.leaseId, result: null },
      ],
    });
    expect(next.status).toBe(200);
    expect(next.body.completions).toEqual([
      { leaseId: la!.leaseId, taskId: la!.taskId, status: 'completed' },
      { leaseId: lb!.leaseId, taskId: lb!.taskId, status: 'completed' },
    ]);
    expect(ids(next.body.leases)).toEqual([c]);
    expect((await http('GET', `/v1/jobs/${la!.taskId}/result`)).body).toMatchObject({
      status: 'completed',
      result: { done: la!.taskId },
    });
    expect((await http('GET', `/v1/jobs/${lb!.taskId}/result`)).body).toMatchObject({
      status: 'completed',
      result: null,
    });
    // The lease taken with the completions is a lease like any: it completes on its own route.
    const done = await worker('POST', onLease(next.body.leases[0], 'complete'), {
      body: { result: 3 },
    });
    expect(done.body).toEqual({ taskId: c, status: 'completed' });
    // Without completions the answer has no `completions` (the list of issue 31 as it was).
    const empty = await lease({ types: ['curl-batch'], waitMs: 0 });
    expect(empty.body).toEqual({ leases: [] });
  });

  it('a completion that cannot be done is answered with the problem …/complete would give; the rest are done', async () => {
    const cancelled = await submit('curl-batch', { n: 1 });
    const big = await submit('curl-batch', { n: 2 });
    const fine = await submit('curl-batch', { n: 3 });
    const got = (await lease({ types: ['curl-batch'], max: 3 })).body.leases as {
      leaseId: string;
      taskId: string;
    }[];
    const of = (id: string) => got.find((l) => l.taskId === id)!.leaseId;
    expect((await http('POST', `/v1/jobs/${cancelled}/cancel`)).status).toBe(200);
    const res = await lease({
      types: ['curl-batch'],
      completions: [
        { leaseId: 'not-a-lease', result: 1 },
        { leaseId: of(cancelled), result: 1 },
        { leaseId: of(big), result: 'x'.repeat(MAX_RESULT_BYTES + 10) },
        { leaseId: of(fine), result: 3 },
      ],
    });
    expect(res.status).toBe(200);
    const answers = res.body.completions as {
      leaseId: string;
      problem?: Record<string, unknown>;
    }[];
    expect(answers.map((a) => a.leaseId)).toEqual([
      'not-a-lease',
      of(cancelled),
      of(big),
      of(fine),
    ]);
    expect(answers[0]!.problem).toMatchObject({ status: 404, type: '/problems/lease-not-found' });
    expect(answers[1]!.problem).toMatchObject({
      status: 409,
      type: '/problems/lease-ended',
      taskStatus: 'cancelled',
    });
    expect(answers[2]!.problem).toMatchObject({
      status: 422,
      type: '/problems/result-too-large',
      taskStatus: 'failed',
    });
    expect(answers[3]).toEqual({ leaseId: of(fine), taskId: fine, status: 'completed' });
    expect((await http('GET', `/v1/jobs/${big}/result`)).body).toMatchObject({
      status: 'failed',
      error: { code: 'result-too-large' },
    });
    expect((await http('GET', `/v1/jobs/${fine}/result`)).body.result).toBe(3);
    // A lease completed once answers 409 when sent again.
    const again = await lease({
      types: ['curl-batch'],
      completions: [{ leaseId: of(fine), result: 4 }],
    });
    expect(again.body.completions[0].problem).toMatchObject({ status: 409 });
  });

  it('an expired lease sent as a completion answers 409 lease-expired; its job runs again (attempt 2)', async () => {
    const id = await submit('curl-batch', { n: 9 });
    const held = (await lease({ types: ['curl-batch'], max: 1 })).body.leases[0];
    expect(held).toMatchObject({ taskId: id, attempt: 1 });
    // Not renewed: BullMQ's stalled check (every leaseMs / 2) puts the job back after leaseMs.
    const again = await waitFor(
      async () => {
        const res = await lease({ types: ['curl-batch'], max: 1, waitMs: 500 });
        return res.body.leases[0] as { leaseId: string; taskId: string; attempt: number };
      },
      { what: 'the expired lease leased again', timeoutMs: 15_000 },
    );
    expect(again).toMatchObject({ taskId: id, attempt: 2 });
    const late = await lease({
      types: ['curl-batch'],
      max: 1,
      completions: [{ leaseId: held.leaseId, result: 'late' }],
    });
    expect(late.body.completions[0].problem).toMatchObject({
      status: 409,
      type: '/problems/lease-expired',
    });
    expect(late.body.leases).toEqual([]);
    const done = await lease({
      types: ['curl-batch'],
      completions: [{ leaseId: again.leaseId, result: 'on time' }],
    });
    expect(done.body.completions[0]).toMatchObject({ taskId: id, status: 'completed' });
    expect((await http('GET', `/v1/jobs/${id}/result`)).body.result).toBe('on time');
  }, 30_000);

  it('takes the next job only from the types the call asks for', async () => {
    const mine = await submit('curl-batch', {});
    const held = (await lease({ types: ['curl-batch'], max: 1 })).body.leases[0];
    expect(held.taskId).toBe(mine);
    const waiting = await submit('curl-batch', {});
    const other = await submit('curl-batch-other', {});
    const res = await lease({
      types: ['curl-batch-other'],
      max: 2,
      completions: [{ leaseId: held.leaseId, result: 'ok' }],
    });
    expect(res.body.completions[0]).toMatchObject({ taskId: mine, status: 'completed' });
    expect(ids(res.body.leases)).toEqual([other]);
    // Still there for a call that asks for its type, as a first run (attempt 1).
    const rest = await lease({ types: ['curl-batch'], max: 1, waitMs: 2000 });
    expect(ids(rest.body.leases)).toEqual([waiting]);
    expect(rest.body.leases[0].attempt).toBe(1);
    for (const l of [...res.body.leases, ...rest.body.leases]) {
      await worker('POST', onLease(l, 'complete'), { body: { result: 0 } });
    }
  });

  it('refuses a bad completion, or an unknown type, with 400 and completes nothing', async () => {
    const id = await submit('curl-batch', {});
    const held = (await lease({ types: ['curl-batch'], max: 1 })).body.leases[0];
    for (const body of [
      { types: ['curl-batch'], completions: [{ leaseId: held.leaseId }] },
      { types: ['curl-batch'], completions: [{ leaseId: held.leaseId, result: 1, extra: 1 }] },
      { types: ['curl-batch'], completions: [{ leaseId: '', result: 1 }] },
      { types: ['curl-batch'], completions: 'all of them' },
      { types: ['no-such-type'], completions: [{ leaseId: held.leaseId, result: 1 }] },
    ]) {
      const res = await lease(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.type).toBe('/problems/invalid-request');
    }
    expect((await http('GET', `/v1/jobs/${id}`)).body.status).toBe('working');
    const done = await worker('POST', onLease(held, 'complete'), { body: { result: 1 } });
    expect(done.body).toEqual({ taskId: id, status: 'completed' });
  });

  it('answers the same through Express as through the fast lane (a chunked body takes Express)', async () => {
    const id = await submit('curl-batch', {});
    const held = (await lease({ types: ['curl-batch'], max: 1 })).body.leases[0];
    const text = JSON.stringify({
      types: ['curl-batch'],
      waitMs: 0,
      completions: [{ leaseId: held.leaseId, result: 'via express' }],
    });
    const res = await fetch(`${base}/v1/worker/leases`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OTHER_WORKER_KEY}`, 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(text));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({
      leases: [],
      completions: [{ leaseId: held.leaseId, taskId: id, status: 'completed' }],
    });
    expect((await http('GET', `/v1/jobs/${id}/result`)).body.result).toBe('via express');
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(
      /longrun_http_request_duration_seconds_count\{method="POST",route="\/v1\/worker\/leases",status="200"\} [1-9]/,
    );
  });
});

/** The README's HTTP-worker walk-through: its `sh` block, and the `text` block of what it prints. */
function readmeWalkthrough(): { script: string; prints: string[] } {
  const readme = readFileSync(resolve(root, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## HTTP workers');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const script = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  const prints = /```text\n([\s\S]*?)```/.exec(section)?.[1];
  if (!script || !prints) throw new Error('README.md has no HTTP-worker walk-through');
  return { script, prints: prints.trimEnd().split('\n') };
}

/** An expected line as a pattern: `0b7c2a4e-…` is any task id, any other `…` anything. */
function linePattern(line: string): RegExp {
  const escaped = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^${escaped.replace(/[0-9a-f]{8}-…/g, '[0-9a-f]{8}-[0-9a-f-]{27}').replace(/…/g, '.*')}$`,
  );
}

describe('the README', () => {
  it('the curl walk-through prints what it says', async () => {
    // An API with the default lease, as the README's reader runs it; same Redis and prefix.
    const api = await startApp('api', {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
      LONGRUN_WORKER_KEYS: `curl:${OTHER_WORKER_KEY}`,
      PORT: '0',
      HOST: '127.0.0.1',
    });
    stops.push(() => api.stop());
    const { script, prints } = readmeWalkthrough();
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
      env: {
        ...process.env,
        LONGRUN_URL: `http://127.0.0.1:${api.ready.port as number}`,
        API_KEY: KEY_A,
        WORKER_KEY: OTHER_WORKER_KEY,
      },
      timeout: 30_000,
    });
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(prints.length);
    prints.forEach((expected, i) => expect(lines[i]).toMatch(linePattern(expected)));
  }, 40_000);
});

describe('an API that is stopping', () => {
  it('answers lease calls 503 with Retry-After, so HTTP workers back off instead of re-polling', async () => {
    // Found by running the README: after SIGTERM the API answered each lease call at once with an
    // empty 200 while its keep-alive connections lasted, and the Python worker re-polled ~1 000
    // times a second until the API exited.
    const api = await startApp('api', {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
      LONGRUN_WORKER_KEYS: `curl:${OTHER_WORKER_KEY}`,
      PORT: '0',
      HOST: '127.0.0.1',
    });
    stops.push(() => api.stop());
    // The key that owns curl-echo (issue 41: a key leases only the types it owns).
    const other = httpClient(`http://127.0.0.1:${api.ready.port as number}`, OTHER_WORKER_KEY);
    const polling = other('POST', '/v1/worker/leases', {
      body: { types: ['curl-echo'], max: 1, waitMs: 20_000 },
    });
    await new Promise((r) => setTimeout(r, 300)); // the long poll is waiting
    const stopped = api.stop();
    const res = await polling;
    expect(res.status, res.text).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.type).toBe('/problems/stopping');
    expect(await stopped).toBe(0);
  }, 30_000);
});
