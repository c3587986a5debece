// Durable calls keep what they promise (issue 40, items 9, 10, 11, 13): a sleep that can never
// end fails the task at once with a code; a parent told to fail on a child's failure fails at
// once, without spending attempts replaying it; a step's result is typed and checked as the
// JSON it comes back as; the docs say a step is at least once. The real API and an SDK worker in
// this process (its handlers count their own runs), the real Redis.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { JobContext, Jsonified } from '@longrun/core';
import { createWorker, defineJobType, type LongrunWorker } from '@longrun/worker';
import { waitFor } from './helpers/http.js';
import { startInProcessApi, type InProcessApi, workerRedis } from './helpers/service.js';

const root = resolve(import.meta.dirname, '..');

/** The attempts (`ctx.attempt`) each task's handler ran with, one entry per run. */
const runs = new Map<string, number[]>();
const ran = (ctx: JobContext) =>
  runs.set(ctx.taskId, [...(runs.get(ctx.taskId) ?? []), ctx.attempt]);

/** Retried while attempts are left: only a fatal error fails these at their first attempt. */
const RETRIED = { attempts: 3, backoffMs: 50 };

const SLEEPS = {
  huge: (ctx: JobContext) => ctx.sleep(1e300),
  infinity: (ctx: JobContext) => ctx.sleep(Infinity),
  'until-huge': (ctx: JobContext) => ctx.sleepUntil(1e300),
  'until-past-dates': (ctx: JobContext) => ctx.sleepUntil(8.64e15 + 1),
  nan: (ctx: JobContext) => ctx.sleep(NaN),
  'until-invalid-date': (ctx: JobContext) => ctx.sleepUntil(new Date('not a date')),
  zero: (ctx: JobContext) => ctx.sleep(0),
  negative: (ctx: JobContext) => ctx.sleep(-5000),
  'negative-huge': (ctx: JobContext) => ctx.sleep(-1e300),
  'negative-infinity': (ctx: JobContext) => ctx.sleep(-Infinity),
  'until-epoch': (ctx: JobContext) => ctx.sleepUntil(new Date(0)),
} as const;

const sleeperJob = defineJobType({
  name: 'sleeper',
  input: z.object({ how: z.enum(Object.keys(SLEEPS) as [keyof typeof SLEEPS]) }),
  ...RETRIED,
  async handler({ how }, ctx) {
    ran(ctx);
    await SLEEPS[how](ctx);
    return { slept: how };
  },
});

const boomJob = defineJobType({
  name: 'boom',
  input: z.object({}),
  handler: () => {
    throw new Error('the child failed');
  },
});

const parentJob = defineJobType({
  name: 'parent',
  input: z.object({}),
  ...RETRIED,
  async handler(_input, ctx) {
    ran(ctx);
    return ctx.runTask('boom', {}, { failOnChildFailure: true });
  },
});

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

/** Values a step may not return: JSON would not give them back. */
const NOT_JSON: Record<string, () => unknown> = {
  map: () => new Map([['a', 1]]),
  set: () => ({ ids: new Set([1, 2]) }),
  function: () => ({ f: () => 1 }),
  bigint: () => ({ n: 10n }),
  'undefined-in-array': () => [1, undefined],
  'class-instance': () => new Point(1, 2),
  nan: () => ({ ratio: NaN }),
  infinity: () => [Infinity],
  symbol: () => ({ s: Symbol('x') }),
};

const stepperJob = defineJobType({
  name: 'stepper',
  input: z.object({ value: z.string() }),
  ...RETRIED,
  async handler({ value }, ctx) {
    ran(ctx);
    if (value !== 'json') return ctx.step('value', NOT_JSON[value]!);
    // What each run sees, the first (fn's own value, recorded) and the one after the sleep.
    const at = await ctx.step('at', () => new Date(0));
    const plain = await ctx.step('plain', () => ({ a: 1, gone: undefined, list: ['x'] }));
    const nothing = await ctx.step('nothing', () => undefined);
    const seen = { at, typeofAt: typeof at, plain, nothing };
    await ctx.sleep(300);
    return seen;
  },
});

let api: InProcessApi;
let worker: LongrunWorker;

beforeAll(async () => {
  api = await startInProcessApi({ register: false });
  worker = createWorker({
    ...workerRedis(),
    prefix: api.prefix,
    jobs: [sleeperJob, boomJob, parentJob, stepperJob],
    concurrency: 4,
    logger: pino({ level: 'silent' }),
    webhooks: false,
    reconcile: false,
  });
  await worker.start();
});
afterAll(async () => {
  await worker?.close();
  await api?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a task handle as JSON
async function run(type: string, input: unknown): Promise<any> {
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
      return ['completed', 'failed', 'cancelled'].includes(h.status) ? h : undefined;
    },
    { what: `task ${id} finished`, timeoutMs: 20_000 },
  );
}

describe('a sleep that can never end (item 9)', () => {
  it.each(['huge', 'infinity', 'until-huge', 'until-past-dates'])(
    'ctx.sleep %s fails the task at once with sleep-past-expiry',
    async (how) => {
      const done = await run('sleeper', { how });
      expect(done.status).toBe('failed');
      expect(done.error.code, done.error.message).toBe('sleep-past-expiry');
      expect(done.error.message).not.toMatch(/Invalid time value/);
      expect(runs.get(done.taskId)).toEqual([1]);
    },
  );

  it.each(['nan', 'until-invalid-date'])(
    'ctx.sleep %s fails the task at once with sleep-invalid',
    async (how) => {
      const done = await run('sleeper', { how });
      expect(done.status).toBe('failed');
      expect(done.error.code, done.error.message).toBe('sleep-invalid');
      expect(runs.get(done.taskId)).toEqual([1]);
    },
  );

  it.each(['zero', 'negative', 'negative-huge', 'negative-infinity', 'until-epoch'])(
    'ctx.sleep %s ends at once: the task completes, its sleep recorded at a real date',
    async (how) => {
      const done = await run('sleeper', { how });
      expect(done.status, JSON.stringify(done.error)).toBe('completed');
      expect(done.result).toEqual({ slept: how });
      const sleep = (done.steps as { name: string; endedAt: unknown }[]).find(
        (s) => s.name === '$sleep:1',
      );
      expect(Number.isNaN(Date.parse(String(sleep?.endedAt))), String(sleep?.endedAt)).toBe(false);
    },
  );
});

describe('a child that fails its parent (item 10)', () => {
  it('fails the parent at once with child-failed, no attempt spent replaying it', async () => {
    const done = await run('parent', {});
    expect(done.status).toBe('failed');
    expect(done.error.code).toBe('child-failed');
    // The run that made the child and parked, and the one the child's end woke: both attempt 1.
    expect(runs.get(done.taskId)).toEqual([1, 1]);
  });
});

describe('a step result is what JSON gives back (item 11)', () => {
  it('types ctx.step as the JSON its result comes back as', () => {
    // Type assertions only (`tsc` checks them): a function never called.
    const types = (ctx: JobContext) => {
      const step = <T>(fn: () => Promise<T> | T) => ctx.step('s', fn);
      expectTypeOf(step(() => new Date())).resolves.toEqualTypeOf<string>();
      expectTypeOf(step(async () => ({ at: new Date(), n: 1 }))).resolves.toEqualTypeOf<{
        at: string;
        n: number;
      }>();
      expectTypeOf(step(() => undefined)).resolves.toEqualTypeOf<null>();
      expectTypeOf(step(async () => {})).resolves.toEqualTypeOf<null>();
      expectTypeOf(step(() => new Map<string, number>())).resolves.toEqualTypeOf<never>();
      expectTypeOf<Jsonified<{ a?: number; b: string | undefined; c: undefined }>>().toEqualTypeOf<{
        a?: number;
        b?: string;
      }>();
      expectTypeOf<Jsonified<{ f: () => void; n: 1 }>>().toEqualTypeOf<{ n: 1 }>();
      expectTypeOf<Jsonified<readonly [Date, 'x']>>().toEqualTypeOf<[string, 'x']>();
      expectTypeOf<Jsonified<(string | null)[]>>().toEqualTypeOf<(string | null)[]>();
      expectTypeOf<Jsonified<{ at: Date } | string>>().toEqualTypeOf<{ at: string } | string>();
      expectTypeOf<Jsonified<Record<string, Date>>>().toEqualTypeOf<Record<string, string>>();
      expectTypeOf<Jsonified<unknown>>().toEqualTypeOf<unknown>();
      expectTypeOf<Jsonified<Set<number>>>().toEqualTypeOf<never>();
    };
    expect(types).toBeTypeOf('function');
  });

  it('gives a Date back as its ISO string on the first run and on a replay', async () => {
    const done = await run('stepper', { value: 'json' });
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(runs.get(done.taskId)).toEqual([1, 1]); // parked on the sleep, replayed after it
    expect(done.result).toEqual({
      at: '1970-01-01T00:00:00.000Z',
      typeofAt: 'string',
      plain: { a: 1, list: ['x'] },
      nothing: null,
    });
  });

  it.each(Object.keys(NOT_JSON))(
    'fails the task at once with step-result-not-json for a %s',
    async (value) => {
      const done = await run('stepper', { value });
      expect(done.status).toBe('failed');
      expect(done.error.code, done.error.message).toBe('step-result-not-json');
      expect(done.error.message).toContain('"value"');
      expect(runs.get(done.taskId)).toEqual([1]);
    },
  );
});

/** Every file under `dir` (recursively) whose name ends with one of `exts`, skipping builds. */
function files(dir: string, exts: string[]): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (['node_modules', 'dist', '.turbo'].includes(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path, exts);
    return exts.some((e) => name.endsWith(e)) ? [path] : [];
  });
}

describe('the docs say a step is at least once (item 13)', () => {
  it('no doc or doc comment says a step runs at most once; the README says at least once', () => {
    const docs = [
      join(root, 'README.md'),
      ...files(join(root, 'docs'), ['.md']),
      ...files(join(root, 'examples'), ['.md', '.ts', '.py']),
      ...files(join(root, 'packages'), ['.ts', '.md']).filter((f) => !f.endsWith('.test.ts')),
      ...files(join(root, 'apps/worker/src'), ['.ts']),
    ];
    const wrong =
      /at[\s-]+most[\s-]+once[\s-]+to[\s-]+completion|steps?[\s-]+that[\s-]+runs?[\s-]+once/i;
    const offenders = docs.filter((f) => wrong.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => f.slice(root.length + 1))).toEqual([]);
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const durable = readme.slice(readme.indexOf('### Durable handlers'));
    expect(durable.slice(0, 800)).toMatch(/at least once/);
    const jsdoc = readFileSync(join(root, 'packages/core/src/job-type.ts'), 'utf8');
    const at = jsdoc.indexOf('step<T>(');
    expect(jsdoc.slice(jsdoc.lastIndexOf('/**', at), at)).toMatch(/at least once/);
  });
});
