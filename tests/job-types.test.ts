import { pino } from 'pino';
import { z } from 'zod';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createRedis, describeJobType, JobTypeRegistry } from '@longrun/engine';
import { createCatalog, createWorker, defineJobType, type LongrunWorker } from '@longrun/worker';
import { waitFor } from './helpers/http.js';
import {
  registerTypes,
  startInProcessApi,
  type InProcessApi,
  uniquePrefix,
  workerRedis,
} from './helpers/service.js';

// The job-type registry end to end: workers made with the SDK, in this process, publish their
// types to Redis; a real API (listening socket) validates and places submits from what it reads.

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
});

async function api(opts: Parameters<typeof startInProcessApi>[0] = {}): Promise<InProcessApi> {
  const started = await startInProcessApi(opts);
  cleanup.push(() => started.close());
  return started;
}

/** A real SDK worker on the API's prefix (quiet, no webhooks or reconciler, fast heartbeat). */
async function worker(
  prefix: string,
  jobs: Parameters<typeof createWorker>[0]['jobs'],
): Promise<LongrunWorker> {
  const w = createWorker({
    ...workerRedis(),
    prefix,
    jobs,
    concurrency: 4,
    logger: pino({ level: 'silent' }),
    webhooks: false,
    reconcile: false,
    heartbeatMs: 200,
    shutdownGraceMs: 2000,
  });
  cleanup.push(() => w.close());
  await w.start();
  return w;
}

const greetJob = defineJobType({
  name: 'greet',
  input: z.object({ name: z.string().min(1), loud: z.boolean().default(false) }),
  handler: ({ name, loud }) => ({
    greeting: loud ? `HELLO ${name.toUpperCase()}` : `hello ${name}`,
  }),
});

/** Two versions of one type, as a rolling deploy has them: v2 requires a field v1 refuses. */
const countV1 = defineJobType({
  name: 'count',
  input: z.strictObject({ n: z.number().int() }),
  handler: ({ n }) => ({ version: 1, n }),
});
const countV2 = defineJobType({
  name: 'count',
  input: z.strictObject({ n: z.number().int(), unit: z.string() }),
  handler: ({ n, unit }) => ({ version: 2, n, unit }),
});

const submit = (a: InProcessApi, type: string, input: unknown) =>
  a.http('POST', '/v1/jobs', { body: { type, input } });

async function result(a: InProcessApi, id: string) {
  return waitFor(
    async () => {
      const res = await a.http('GET', `/v1/jobs/${id}/result`);
      return res.status === 200 ? res.body : undefined;
    },
    { what: `task ${id} to finish` },
  );
}

describe('reserved names', () => {
  it('a job type named longrun_* is refused by the catalog, the worker and the registry', async () => {
    // The MCP door lists its own tools (longrun_get_task, …) beside the job types (issue 32).
    const reserved = defineJobType({
      name: 'longrun_get_task',
      input: z.object({}),
      handler: () => ({}),
    });
    expect(() => createCatalog([reserved])).toThrow(/"longrun_get_task" is reserved/);
    expect(() => createWorker({ ...workerRedis(), jobs: [reserved] })).toThrow(
      /"longrun_get_task" is reserved/,
    );
    const redis = createRedis(inject('redisUrl'), 'producer');
    cleanup.push(() => redis.quit());
    if (redis.status !== 'ready') await new Promise((r) => redis.once('ready', r));
    const prefix = uniquePrefix();
    const registry = new JobTypeRegistry(redis, prefix);
    const plain = describeJobType(greetJob);
    await expect(
      registry.publish('w1', [plain, { ...plain, name: 'longrun_list_tasks' }], 10_000),
    ).rejects.toThrow(/"longrun_list_tasks" is reserved/);
    // Nothing of that heartbeat was written, the valid type neither.
    expect((await registry.read()).size).toBe(0);
    // A name merely containing the prefix elsewhere is a name like any other.
    expect(() => createCatalog([{ ...reserved, name: 'my_longrun_task' }])).not.toThrow();
  });
});

describe('GET /v1/job-types', () => {
  it('lists each registered type with its input schema, queue, version and live workers', async () => {
    const a = await api();
    const res = await a.http('GET', '/v1/job-types');
    expect(res.status).toBe(200);
    const sleep = res.body.jobTypes.find((t: { name: string }) => t.name === 'sleep');
    expect(sleep).toMatchObject({
      queue: 'tasks-slow',
      attempts: 1,
      workers: 1,
      version: expect.stringMatching(/^[0-9a-f]{16}$/),
      inputSchema: { type: 'object', required: ['ms'] },
    });
    expect(sleep.versions).toHaveLength(1);
    expect(res.body.jobTypes.map((t: { name: string }) => t.name)).toEqual(
      [...res.body.jobTypes.map((t: { name: string }) => t.name)].sort(),
    );
    expect((await a.http('GET', '/v1/job-types', { key: null })).status).toBe(401);
  });
});

describe('submits are checked against the registry', () => {
  it('a type no worker registered is 400, naming the registered ones', async () => {
    const a = await api();
    const res = await submit(a, 'nope', {});
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.errors[0]).toMatchObject({ path: 'type' });
    expect(res.body.errors[0].message).toMatch(/sleep/);
    // The worker serving it may point at another Redis or prefix: the detail says which settings
    // to compare (issue 27).
    expect(res.body.detail).toMatch(/REDIS_URL/);
    expect(res.body.detail).toMatch(/LONGRUN_PREFIX/);

    const empty = await api({ register: false });
    const none = await submit(empty, 'sleep', { ms: 1 });
    expect(none.status).toBe(400);
    expect(none.body.errors[0].message).toMatch(/no job type is registered yet/);
  });

  it('an input the registered schema refuses is 422 with the field named', async () => {
    const a = await api();
    const res = await submit(a, 'sleep', { ms: 'soon' });
    expect(res.status).toBe(422);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ path: 'input.ms' }));
    const missing = await submit(a, 'sleep', {});
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toContainEqual(expect.objectContaining({ path: 'input.ms' }));
  });

  it('an enum or constant the input misses is 422 naming the allowed values', async () => {
    const a = await api({ register: false });
    const paint = defineJobType({
      name: 'paint',
      input: z.strictObject({
        colour: z.enum(['red', 'green', 'blue']),
        finish: z.literal('matte'),
      }),
      handler: () => null,
    });
    const producer = createRedis(inject('redisUrl'), 'producer');
    cleanup.push(async () => producer.disconnect());
    await registerTypes(producer, a.prefix, new Map([['paint', paint]]));
    const res = await waitFor(
      async () => {
        const r = await submit(a, 'paint', { colour: 'pink', finish: 'gloss' });
        return r.status === 400 ? undefined : r;
      },
      { what: 'paint registered' },
    );
    expect(res.status).toBe(422);
    const byPath = Object.fromEntries(
      (res.body.errors as { path: string; message: string }[]).map((e) => [e.path, e.message]),
    );
    expect(byPath['input.colour']).toBe('must be one of "red", "green", "blue"');
    expect(byPath['input.finish']).toBe('must be "matte"');
  });

  it('a type registered after the API started is accepted without a restart, and runs', async () => {
    const a = await api({ register: false });
    expect((await submit(a, 'greet', { name: 'ada' })).status).toBe(400);
    const w = await worker(a.prefix, [greetJob]);
    expect(w.descriptors.map((d) => d.name)).toEqual(['greet']);
    const res = await submit(a, 'greet', { name: 'ada', loud: true });
    expect(res.status).toBe(202);
    expect(res.body.statusMessage).toBe('queued');
    expect(await result(a, res.body.taskId)).toMatchObject({
      status: 'completed',
      result: { greeting: 'HELLO ADA' },
    });
    // Its schema, generated from zod, is what the API checks and what the document publishes.
    expect((await submit(a, 'greet', { name: '' })).status).toBe(422);
    const doc = await a.http('GET', '/openapi.json', { key: null });
    expect(doc.body.components.schemas['JobInput.greet']).toMatchObject({ required: ['name'] });
  });

  it('a registered type with no live worker is accepted, says it waits, and runs once one starts', async () => {
    const a = await api({ register: false });
    const first = await worker(a.prefix, [greetJob]);
    await first.close();
    const listed = await a.http('GET', '/v1/job-types');
    expect(listed.body.jobTypes).toEqual([expect.objectContaining({ name: 'greet', workers: 0 })]);
    // The API learns of the withdrawal by the registry's announcement, without a request.
    await waitFor(async () => a.types.get('greet')?.workers === 0, { what: 'the announcement' });
    const res = await submit(a, 'greet', { name: 'grace' });
    expect(res.status).toBe(202);
    expect(res.body.statusMessage).toMatch(/waiting for a worker that serves "greet"/);
    await new Promise((r) => setTimeout(r, 300));
    expect((await a.http('GET', `/v1/jobs/${res.body.taskId}`)).body.status).toBe('working');
    await worker(a.prefix, [greetJob]);
    expect(await result(a, res.body.taskId)).toMatchObject({
      status: 'completed',
      result: { greeting: 'hello grace' },
    });
  });
});

describe('two versions of one type (a rolling deploy)', () => {
  it('the newest version with a live worker validates; with it gone, the one still served', async () => {
    const a = await api({ register: false });
    await worker(a.prefix, [countV1]);
    await new Promise((r) => setTimeout(r, 5)); // registeredAt orders the versions
    const v2 = await worker(a.prefix, [countV2]);
    const listed = (await a.http('GET', '/v1/job-types')).body.jobTypes[0];
    expect(listed.versions).toHaveLength(2);
    expect(listed.version).toBe(v2.descriptors[0]!.version);
    expect((await submit(a, 'count', { n: 1 })).status).toBe(422); // v2 wants `unit`
    expect((await submit(a, 'count', { n: 1, unit: 'kg' })).status).toBe(202);

    await v2.close();
    await waitFor(
      async () => a.types.get('count')?.version !== v2.descriptors[0]!.version || undefined,
      { what: 'the API to fall back to the version still served' },
    );
    const back = await submit(a, 'count', { n: 2 });
    expect(back.status).toBe(202);
    expect(await result(a, back.body.taskId)).toMatchObject({ result: { version: 1, n: 2 } });
  });

  it('a worker fails, saying why, a task whose input its own schema refuses', async () => {
    const a = await api({ register: false });
    // v2 is registered (and validates) but only a v1 worker runs: it takes the v2-shaped task.
    const producer = createRedis(inject('redisUrl'), 'producer');
    cleanup.push(async () => producer.disconnect());
    await worker(a.prefix, [countV1]);
    await new Promise((r) => setTimeout(r, 5));
    await registerTypes(producer, a.prefix, new Map([['count', countV2]]), 'deploying-v2');
    await waitFor(async () => a.types.get('count')?.versions.length === 2 || undefined, {
      what: 'both versions',
    });
    const res = await submit(a, 'count', { n: 3, unit: 'kg' });
    expect(res.status).toBe(202);
    const done = await result(a, res.body.taskId);
    expect(done.status).toBe('failed');
    expect(done.error.code).toBe('input-rejected');
    expect(done.error.message).toMatch(/does not match this worker's schema for job type "count"/);
    expect(done.error.message).toMatch(/unit/);
  });
});

describe('the registry in Redis', () => {
  it('a worker whose heartbeat lapses stops counting; stale versions are pruned, the newest kept', async () => {
    const a = await api({ register: false });
    await a.parts.jobs.whenReady();
    const registry = new JobTypeRegistry(a.parts.jobs.redis, a.prefix);
    const v1 = describeJobType(countV1);
    const v2 = describeJobType(countV2);
    await registry.publish('gone-soon', [v1], 150);
    await new Promise((r) => setTimeout(r, 5));
    await registry.publish('gone-soon-too', [v2], 150);
    expect((await registry.read()).get('count')).toMatchObject({ workers: 1, version: v2.version });
    await new Promise((r) => setTimeout(r, 250));
    const lapsed = (await registry.read()).get('count')!;
    expect(lapsed.workers).toBe(0);
    expect(lapsed.version).toBe(v2.version); // none live: the newest validates
    expect(await registry.prune(0)).toBe(1);
    const kept = (await registry.read()).get('count')!;
    expect(kept.versions.map((v) => v.version)).toEqual([v2.version]);
    expect(await registry.prune(0)).toBe(0); // the last version of a type is never dropped
  });

  it('a damaged entry is skipped, not fatal', async () => {
    const a = await api();
    const redis = a.parts.jobs.redis;
    await redis.hset(`${a.prefix}:jobtypes`, 'broken@0', '{not json');
    const types = await new JobTypeRegistry(redis, a.prefix).read();
    expect(types.has('sleep')).toBe(true);
    expect((await a.http('GET', '/v1/job-types')).status).toBe(200);
  });

  it('createWorker refuses bad options, naming them', () => {
    const base = { jobs: [greetJob], logger: pino({ level: 'silent' }) };
    expect(() => createWorker({ ...base, jobs: [] })).toThrow(/no job type/);
    expect(() => createWorker({ ...base, jobs: [greetJob, greetJob] })).toThrow(/duplicate/);
    expect(() => createWorker({ ...base, concurrency: 0 })).toThrow(/concurrency/);
    expect(() => createWorker({ ...base, redisUrl: 'http://x' })).toThrow(/redisUrl/);
    expect(() => createWorker({ ...base, types: ['other'] })).toThrow(/unknown job type other/);
    expect(() => createWorker({ ...base, typeConcurrency: { greet: 2 } })).toThrow(/own/);
  });
});
