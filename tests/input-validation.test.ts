import { pino } from 'pino';
import { z } from 'zod';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createCatalog } from '@longrun/core';
import { createRedis } from '@longrun/engine';
import { createWorker, defineJobType, type LongrunWorker } from '@longrun/worker';
import { httpClient, waitFor } from './helpers/http.js';
import { startApiProcess } from './helpers/processes.js';
import {
  API_KEYS,
  KEY_A,
  registerTypes,
  startInProcessApi,
  uniquePrefix,
  type InProcessApi,
  workerRedis,
} from './helpers/service.js';

// Issue 27 items 7 and 17: the API checks a submit against the JSON Schema the worker published
// as the worker's zod would (formats included), runs the schema's patterns on a linear-time
// engine (a worker's backtracking regex must not hold the API's event loop), and says what it
// cannot check through its JSON log.

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
});
const cleanups = { add: (fn: () => unknown) => cleanup.push(async () => fn()) };

const formatsJob = defineJobType({
  name: 'formats',
  input: z.strictObject({
    site: z.url().optional(),
    mail: z.email().optional(),
    id: z.uuid().optional(),
    at: z.iso.datetime().optional(),
    day: z.iso.date().optional(),
  }),
  handler: (input) => input,
});

/** The pattern of the issue: exponential backtracking on `a…a!`. */
const evilJob = defineJobType({
  name: 'evil',
  input: z.strictObject({ word: z.string().regex(/^(a+)+$/) }),
  handler: ({ word }) => ({ word }),
});

/** A lookahead: no linear-time engine runs it, so the API leaves it to the worker. */
const lookaroundJob = defineJobType({
  name: 'lookaround',
  input: z.strictObject({ word: z.string().regex(/^(?=a)(a+)+$/) }),
  handler: ({ word }) => ({ word }),
});

/** A format no validator knows: the API cannot check it and says so in its log. */
const customFormatJob = defineJobType({
  name: 'custom-format',
  input: z.strictObject({ code: z.string().meta({ format: 'x-team-code' }) }),
  handler: ({ code }) => ({ code }),
});

/** Asks for a code the answer must match with the evil pattern. */
const askJob = defineJobType({
  name: 'ask-code',
  input: z.strictObject({}),
  async handler(_input, ctx) {
    return ctx.requestInput({
      message: 'code?',
      schema: z.strictObject({ code: z.string().regex(/^(a+)+$/) }),
    });
  },
});

const types = createCatalog([formatsJob, evilJob, lookaroundJob, customFormatJob, askJob]);

/** 40 `a`s and a `!`: hours of backtracking for `^(a+)+$`, microseconds for a linear engine. */
const EVIL = `${'a'.repeat(40)}!`;

async function inProcess(): Promise<InProcessApi> {
  const api = await startInProcessApi({ register: types });
  cleanup.push(() => api.close());
  return api;
}

/** The built API as a process (a blocked event loop there cannot stop this test's clock). */
async function apiProcess(prefix: string) {
  const connection = createRedis(inject('redisUrl'), 'producer');
  cleanup.push(async () => connection.disconnect());
  await registerTypes(connection, prefix, types);
  const api = await startApiProcess(cleanups, {
    REDIS_URL: inject('redisUrl'),
    LONGRUN_PREFIX: prefix,
    LONGRUN_API_KEYS: API_KEYS,
    LOG_LEVEL: 'info',
  });
  return { api, http: httpClient(api.url, KEY_A) };
}

describe('formats (item 7)', () => {
  it('refuses a z.url() field given "not a url" with a 422 naming the field, and takes a URL', async () => {
    const api = await inProcess();
    const bad = await api.http('POST', '/v1/jobs', {
      body: { type: 'formats', input: { site: 'not a url' } },
    });
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual(['input.site']);
    for (const [field, value] of [
      ['mail', 'not an email'],
      ['id', 'not-a-uuid'],
      ['at', 'yesterday'],
      ['day', '2023-02-29'],
    ] as const) {
      const res = await api.http('POST', '/v1/jobs', {
        body: { type: 'formats', input: { [field]: value } },
      });
      expect(res.status, `${field}: ${value}`).toBe(422);
      expect(res.body.errors[0].path).toBe(`input.${field}`);
    }
    const good = await api.http('POST', '/v1/jobs', {
      body: {
        type: 'formats',
        input: {
          site: 'https://example.com/a b',
          mail: 'ada@example.com',
          id: '123e4567-e89b-12d3-a456-426614174000',
          at: '2024-02-29T12:00:00.5Z',
          day: '2024-02-29',
        },
      },
    });
    expect(good.status).toBe(202);
  });

  // Both directions, for the formats zod emits: what the worker's zod accepts the API accepts,
  // what it refuses the API refuses (the API must never turn away input the worker would run).
  const corpus: Record<string, [z.ZodType, string[]]> = {
    uri: [
      z.url(),
      [
        'https://example.com',
        'not a url',
        'http://example.com/a b',
        ' https://example.com ',
        'https://例え.jp/パス',
        'mailto:a@b.co',
        'urn:isbn:0451450523',
        'http://[::1]:80/',
        'http://exa mple.com',
        'https://example.com/%zz',
        '//example.com',
        '/relative',
        'https://a.com/|',
        'https://a.com/?q=<x>',
        'https://user@a.com:99999',
        'https://a.com/{x}',
        'https://a.com#frag#2',
        '',
        'x',
      ],
    ],
    email: [
      z.email(),
      [
        'a@b.co',
        'not an email',
        'x@a-.com',
        "o'neil@x.io",
        '.a@b.co',
        'a..b@c.de',
        'a@b',
        'a@b.c',
        'a+b@c.io',
        'a@1.2.3.4',
        'a!b@c.de',
        'a@b.c0m',
        'ü@b.co',
      ],
    ],
    uuid: [
      z.uuid(),
      [
        '123e4567-e89b-12d3-a456-426614174000',
        '123E4567-E89B-12D3-A456-426614174000',
        'not-a-uuid',
        '00000000-0000-0000-0000-000000000000',
        'urn:uuid:123e4567-e89b-12d3-a456-426614174000',
        '123e4567-e89b-92d3-a456-426614174000',
        '123e4567e89b12d3a456426614174000',
      ],
    ],
    'date-time': [
      z.iso.datetime({ offset: true }),
      [
        '2024-01-01T00:00:00Z',
        '2024-01-01T00:00:00.123Z',
        '2024-01-01T00:00:00+02:00',
        '2024-01-01 00:00:00Z',
        '2024-01-01t00:00:00z',
        '2023-02-29T00:00:00Z',
        '2024-01-01T23:59:60Z',
        '2024-01-01T00:00:00+0200',
        'not a date',
      ],
    ],
    date: [z.iso.date(), ['2024-02-29', '2023-02-29', '2024-04-31', '2024-1-1', 'x']],
    duration: [z.iso.duration(), ['P1D', 'PT1.5S', 'PT1,5S', 'P1W', 'P', 'PT', 'x']],
    ipv4: [z.ipv4(), ['1.2.3.4', '256.1.1.1', '01.2.3.4', '1.2.3']],
    hostname: [z.hostname(), ['example.com', 'a-.com', '-a.com', 'example.com.', 'a_b.com']],
  };

  for (const [format, [schema, values]] of Object.entries(corpus)) {
    it(`judges "${format}" as the worker's zod does`, async () => {
      const api = await inProcess();
      const name = `fmt-${format}`;
      const prefix = api.prefix;
      const connection = createRedis(inject('redisUrl'), 'producer');
      cleanup.push(async () => connection.disconnect());
      const job = defineJobType({ name, input: z.strictObject({ v: schema }), handler: () => 1 });
      await registerTypes(connection, prefix, createCatalog([job]), `fmt-${format}`);
      await api.types.refresh();
      const type = api.types.get(name);
      expect(type?.inputSchema).toMatchObject({ properties: { v: { type: 'string' } } });
      const disagreements = values.flatMap((v) => {
        const zod = job.input.safeParse({ v }).success;
        const ajv = api.types.validate(type!, { v }).length === 0;
        return zod === ajv ? [] : [`${JSON.stringify(v)}: zod ${zod}, API ${ajv}`];
      });
      expect(disagreements).toEqual([]);
      // The corpus holds both kinds, so both directions are exercised.
      const verdicts = new Set(values.map((v) => job.input.safeParse({ v }).success));
      expect(verdicts).toEqual(new Set([true, false]));
    });
  }

  it('logs what it cannot check through the JSON log, never as plain text', async () => {
    const { api, http } = await apiProcess(uniquePrefix());
    const res = await http('POST', '/v1/jobs', {
      body: { type: 'custom-format', input: { code: 'abc' } },
    });
    expect(res.status).toBe(202);
    const url = await http('POST', '/v1/jobs', {
      body: { type: 'formats', input: { site: 'https://example.com' } },
    });
    expect(url.status).toBe(202);
    const warned = await waitFor(async () => api.lines.find((l) => l.includes('x-team-code')), {
      what: 'a log line naming the unknown format',
    });
    expect(JSON.parse(warned)).toMatchObject({ level: 40 });
    const notJson = api.lines.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
  });
});

describe('patterns on a linear-time engine (item 17)', () => {
  // Without a linear-time engine each request below backtracks for hours and this test fails by
  // timing out (the API is a separate process, so this test's clock keeps running).
  it('answers a backtracking pattern with an evil input at once: 422 naming the field', async () => {
    const { api, http } = await apiProcess(uniquePrefix());
    const bad = await http('POST', '/v1/jobs', { body: { type: 'evil', input: { word: EVIL } } });
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual(['input.word']);
    const good = await http('POST', '/v1/jobs', { body: { type: 'evil', input: { word: 'aaa' } } });
    expect(good.status).toBe(202);
    // The API is still answering others.
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
  });

  it('leaves a pattern the linear engine cannot run (a lookahead) to the worker, and says so', async () => {
    const { api, http } = await apiProcess(uniquePrefix());
    const res = await http('POST', '/v1/jobs', {
      body: { type: 'lookaround', input: { word: EVIL } },
    });
    expect(res.status).toBe(202);
    const warned = await waitFor(async () => api.lines.find((l) => l.includes('(?=a)(a+)+$')), {
      what: 'a log line naming the pattern left to the worker',
    });
    expect(JSON.parse(warned)).toMatchObject({ level: 40, type: 'lookaround' });
  });

  it('checks an answer against a backtracking pattern at once: 422, the task still waiting', async () => {
    const prefix = uniquePrefix();
    const { http } = await apiProcess(prefix);
    const worker: LongrunWorker = createWorker({
      ...workerRedis(),
      prefix,
      jobs: [askJob],
      logger: pino({ level: 'silent' }),
      webhooks: false,
      reconcile: false,
      heartbeatMs: 200,
    });
    cleanup.push(() => worker.close());
    await worker.start();
    const created = await http('POST', '/v1/jobs', { body: { type: 'ask-code', input: {} } });
    expect(created.status).toBe(202);
    const id: string = created.body.taskId;
    await waitFor(
      async () => {
        const task = await http('GET', `/v1/jobs/${id}`);
        if (task.body.status === 'failed') throw new Error(JSON.stringify(task.body));
        return task.body.status === 'input_required';
      },
      { what: 'the task to ask' },
    );
    const bad = await http('POST', `/v1/jobs/${id}/input`, { body: { input: { code: EVIL } } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual(['input.code']);
    expect((await http('GET', `/v1/jobs/${id}`)).body.status).toBe('input_required');
    const ok = await http('POST', `/v1/jobs/${id}/input`, { body: { input: { code: 'aa' } } });
    expect(ok.status).toBe(200);
  });
});
