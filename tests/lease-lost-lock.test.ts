// An HTTP worker asks for input on its lease (`POST /v1/worker/leases/{id}/input`). The API
// checks the lease's lock (renewing it), then parks the job with BullMQ's moveToDelayed under
// that lock. If the lock goes in between (it lapsed, and the stalled check gave the job to
// another run), the park answers "Lock mismatch": the worker must hear that its lease expired,
// as it would a moment later, not a 500, and the task must be left to the run holding the job.
// The API process talks to Redis through a relay that holds the park until the lock is taken.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FIELD } from '@longrun/core';
import { httpClient, waitFor } from './helpers/http.js';
import { startApp } from './helpers/processes.js';
import { startRelay, type Relay } from './helpers/relay.js';
import { API_KEYS, KEY_A, uniquePrefix } from './helpers/service.js';

const WORKER_KEY = 'lost-lock-worker-key-0123456789';
const prefix = uniquePrefix();
const direct = new Redis(inject('redisUrl'));
const stops: (() => Promise<unknown>)[] = [];
let relay: Relay;
let http: ReturnType<typeof httpClient>;
let worker: ReturnType<typeof httpClient>;

beforeAll(async () => {
  const target = new URL(inject('redisUrl'));
  relay = await startRelay({ host: target.hostname, port: Number(target.port || 6379) });
  stops.push(() => relay.close());
  const api = await startApp('api', {
    REDIS_URL: relay.url,
    LONGRUN_PREFIX: prefix,
    LONGRUN_API_KEYS: API_KEYS,
    LONGRUN_WORKER_KEYS: `w:${WORKER_KEY}`,
    PORT: '0',
    HOST: '127.0.0.1',
  });
  stops.push(() => api.stop());
  const base = `http://127.0.0.1:${api.ready.port as number}`;
  http = httpClient(base, KEY_A);
  worker = httpClient(base, WORKER_KEY);
  const registered = await worker('PUT', '/v1/worker/job-types/lost-input', {
    body: { inputSchema: { type: 'object' } },
  });
  expect(registered.status).toBe(200);
}, 30_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await direct.quit();
});

describe('an HTTP worker asking for input after its lease lost the job', () => {
  it('is told its lease expired (not a 500); the task is left as the other run has it', async () => {
    const submitted = await http('POST', '/v1/jobs', { body: { type: 'lost-input', input: {} } });
    expect(submitted.status).toBe(202);
    const id = submitted.body.taskId as string;
    const leased = await worker('POST', '/v1/worker/leases', {
      body: { types: ['lost-input'], max: 1, waitMs: 5000 },
    });
    expect(leased.body.leases).toHaveLength(1);
    const leaseId = leased.body.leases[0].leaseId as string;
    const [lock] = await direct.keys(`${prefix}:*:${id}:lock`);
    expect(lock).toBeDefined();
    const token = (await direct.get(lock!))!;
    // Hold the park (the request carrying the lease's token and the delayed set's key).
    relay.hold({ match: token, also: [':delayed'], inclusive: true, replies: false });
    const asking = worker('POST', `/v1/worker/leases/${encodeURIComponent(leaseId)}/input`, {
      body: { message: 'approve?', schema: { type: 'object' } },
    });
    await waitFor(async () => relay.heldRequests > 0 || undefined, { what: 'the park to be held' });
    // Meanwhile the stalled check gave the job to another run.
    await direct.set(lock!, 'another-run', 'PX', 60_000);
    relay.release();
    const res = await asking;
    expect(res.status, res.text).toBe(409);
    expect(res.body.type).toContain('lease-expired');
    expect(await direct.hget(`${prefix}:task:${id}`, FIELD.status)).toBe('working');
    expect(await direct.get(lock!)).toBe('another-run');
  });
});
