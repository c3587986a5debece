import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  createClient,
  LongrunError,
  type JobInput,
  type JobResult,
  type JobTypeInfo,
  type JobTypeMap,
} from '@longrun/client';
import { catalog, type jobTypes } from '@longrun/worker-app';
import { KEY_A, startInProcessApi, type InProcessApi } from './helpers/service.js';

// The client's view of the job-type registry (`jobTypes()`, against a real API with the stock
// types registered), and the type-level maps `createClient<…>()` accepts.

let api: InProcessApi;
beforeAll(async () => {
  api = await startInProcessApi();
});
afterAll(async () => {
  await api?.close();
});

describe('jobTypes()', () => {
  it('returns the registered stock types, sorted, with schema, queue and live workers', async () => {
    const lr = createClient({ baseUrl: api.url, apiKey: KEY_A });
    const types = await lr.jobTypes();
    expect(types.map((t) => t.name)).toEqual([...catalog.keys()].sort());
    const sleep = types.find((t) => t.name === 'sleep');
    expect(sleep).toMatchObject({
      queue: 'tasks-slow',
      attempts: 1,
      workers: 1,
      version: expect.stringMatching(/^[0-9a-f]{16}$/),
      inputSchema: { type: 'object', required: ['ms'], additionalProperties: false },
    });
    expect(sleep!.inputSchema).not.toHaveProperty('$schema');
    expect(sleep!.versions).toEqual([
      {
        version: sleep!.version,
        registeredAt: sleep!.registeredAt,
        lastSeenAt: expect.any(String),
        workers: 1,
      },
    ]);
    expect(new Date(sleep!.registeredAt).getTime()).not.toBeNaN();
    // The same answer the API gives, nothing dropped.
    const raw = await api.http('GET', '/v1/job-types');
    expect(types).toEqual(raw.body.jobTypes);
  });

  it('rejects with a LongrunError 401 for a wrong key', async () => {
    const lr = createClient({ baseUrl: api.url, apiKey: 'wrong-key-0123456789' });
    const error = await lr.jobTypes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LongrunError);
    expect((error as LongrunError).status).toBe(401);
  });
});

/** The shape `longrun types --typescript` generates. */
type Generated = {
  sleep: { input: { ms: number } };
  echo: { input: { [k: string]: unknown } };
  report: { input: { month: string }; result?: { url: string } };
  anything: { input: unknown };
};

describe('type maps', () => {
  it('takes generated shapes { input; result? } as well as zod definitions', () => {
    expectTypeOf<Generated>().toExtend<JobTypeMap>();
    expectTypeOf<typeof jobTypes>().toExtend<JobTypeMap>();
    expectTypeOf<JobInput<Generated, 'sleep'>>().toEqualTypeOf<{ ms: number }>();
    expectTypeOf<JobResult<Generated, 'sleep'>>().toEqualTypeOf<unknown>();
    expectTypeOf<JobResult<Generated, 'report'>>().toEqualTypeOf<{ url: string }>();
    expectTypeOf<JobInput<typeof jobTypes, 'sleep'>>().toEqualTypeOf<{ ms: number }>();
    expectTypeOf<JobResult<typeof jobTypes, 'sleep'>>().toEqualTypeOf<{ sleptMs: number }>();
    // A result declared on top of the generated map (docs/client.md).
    type Declared = Generated & { sleep: { input: { ms: number }; result?: { sleptMs: number } } };
    expectTypeOf<Declared>().toExtend<JobTypeMap>();
    expectTypeOf<JobResult<Declared, 'sleep'>>().toEqualTypeOf<{ sleptMs: number }>();
    expectTypeOf<JobInput<Declared, 'sleep'>>().toEqualTypeOf<{ ms: number }>();
    // One map may mix them.
    type Mixed = Generated & { approval: (typeof jobTypes)['approval'] };
    expectTypeOf<JobInput<Mixed, 'approval'>>().toEqualTypeOf<{ question: string }>();
    expectTypeOf<JobTypeInfo['inputSchema']>().toEqualTypeOf<Record<string, unknown>>();

    const typed = createClient<Generated>({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' });
    expectTypeOf(typed.submit)
      .parameter(0)
      .toEqualTypeOf<'sleep' | 'echo' | 'report' | 'anything'>();
    // Never called: tsc checks these lines, vitest only needs them to exist.
    const compileOnly = () => {
      void typed.submit('sleep', { ms: 5 });
      void typed.submit('echo', { anything: [1, 2] });
      void typed.submit('report', { month: '2026-11' });
      // @ts-expect-error ms must be a number
      void typed.submit('sleep', { ms: 'soon' });
      // @ts-expect-error no such job type
      void typed.submit('nope', {});
    };
    expect(typeof compileOnly).toBe('function');
  });
});
