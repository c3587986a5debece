// A handler's result is stored for the task's ttl: one too big to store (LONGRUN_MAX_RESULT_BYTES),
// or one that is not JSON, fails the task with a clear error instead of filling Redis or leaving
// the task `working` (issue 13).
import { pino } from 'pino';
import { z } from 'zod';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWorker, defineJobType, type LongrunWorker } from '@longrun/worker';
import { waitFor } from './helpers/http.js';
import { startInProcessApi, type InProcessApi, workerRedis } from './helpers/service.js';

const MAX = 64 * 1024;

const blobJob = defineJobType({
  name: 'blob',
  input: z.object({ bytes: z.int().min(0), unicode: z.boolean().default(false) }),
  // `é` is two bytes in UTF-8: the cap counts bytes, not characters.
  handler: ({ bytes, unicode }) => ({ data: unicode ? 'é'.repeat(bytes / 2) : 'x'.repeat(bytes) }),
});
const functionJob = defineJobType({
  name: 'function',
  input: z.object({}),
  handler: () => () => 1,
});
const bigIntJob = defineJobType({
  name: 'bigint',
  input: z.object({}),
  handler: () => ({ n: 10n }),
});

let api: InProcessApi;
let worker: LongrunWorker;

beforeAll(async () => {
  api = await startInProcessApi({ register: false });
  worker = createWorker({
    ...workerRedis(),
    prefix: api.prefix,
    jobs: [blobJob, bigIntJob, functionJob],
    logger: pino({ level: 'silent' }),
    webhooks: false,
    reconcile: false,
    maxResultBytes: MAX,
  });
  await worker.start();
});
afterAll(async () => {
  await worker?.close();
  await api?.close();
});

async function run(type: string, input: unknown): Promise<Record<string, unknown>> {
  const res = await waitFor(
    async () => {
      const r = await api.http('POST', '/v1/jobs', { body: { type, input } });
      return r.status === 202 ? r : undefined; // until the worker's registration is read
    },
    { what: `a ${type} task accepted` },
  );
  const id = res.body.taskId as string;
  return waitFor(
    async () => {
      const h = (await api.http('GET', `/v1/jobs/${id}`)).body;
      return h.status === 'completed' || h.status === 'failed' ? h : undefined;
    },
    { what: `task ${id} finished`, timeoutMs: 20_000 },
  );
}

it('stores a result up to the cap', async () => {
  const done = await run('blob', { bytes: MAX - 100 });
  expect(done.status).toBe('completed');
  expect((done.result as { data: string }).data).toHaveLength(MAX - 100);
});

it('fails a task whose result is over the cap, saying so, and stores none of it', async () => {
  for (const unicode of [false, true]) {
    const done = await run('blob', { bytes: MAX + 2, unicode });
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'result-too-large' });
    expect((done.error as { message: string }).message).toMatch(
      new RegExp(`${MAX + 13} bytes.*over the ${MAX}-byte limit`),
    );
    expect(done.result).toBeUndefined();
  }
});

it('stores a function result as null, as JSON.stringify has it', async () => {
  const done = await run('function', {});
  expect(done.status).toBe('completed');
  expect(done.result).toBeNull();
});

it('fails a task whose result is not JSON, instead of leaving it working', async () => {
  const done = await run('bigint', {});
  expect(done.status).toBe('failed');
  expect(done.error).toMatchObject({ code: 'result-not-json' });
});
