/**
 * Bun. The built API and the stock worker run unchanged on Bun (issue 17): this runs them on the
 * pinned Bun of tools/bun (the npm package `bun`, installed on first use by scripts/install-runtimes.mjs, which `npm test` runs) and drives
 * the task lifecycle through them over HTTP on 127.0.0.1: a completed task with progress, a task
 * that asks for input and is answered, a cancel that aborts a running handler, and a live event
 * stream. It fails, never skips, when Bun is missing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { httpClient, waitFor } from './helpers/http.js';
import { startApp, type Proc } from './helpers/processes.js';
import { readSse } from './helpers/sse.js';
import { API_KEYS, KEY_A, KEY_B, uniquePrefix } from './helpers/service.js';

const root = resolve(import.meta.dirname, '..');
const BUN = resolve(root, 'tools/bun/node_modules/.bin/bun');

function bunBinary(): string {
  if (!existsSync(BUN)) {
    throw new Error(`No Bun at ${BUN}: node scripts/install-runtimes.mjs bun installs it`);
  }
  return BUN;
}

const procs: Proc[] = [];
let url = '';
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  const node = bunBinary();
  const prefix = uniquePrefix();
  const api = await startApp(
    'api',
    {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
      HOST: '127.0.0.1',
      PORT: '0',
    },
    20_000,
    { node },
  );
  procs.push(api);
  procs.push(
    await startApp(
      'worker',
      {
        REDIS_URL: inject('redisUrl'),
        LONGRUN_PREFIX: prefix,
        LONGRUN_METRICS_PORT: '0',
        LONGRUN_METRICS_HOST: '127.0.0.1',
      },
      20_000,
      { node },
    ),
  );
  url = `http://127.0.0.1:${api.ready.port as number}`;
  http = httpClient(url, KEY_A);
}, 60_000);

afterAll(async () => {
  for (const p of procs.reverse()) await p.stop();
});

const handle = async (id: string) => (await http('GET', `/v1/jobs/${id}`)).body;
const until = (id: string, what: string, check: (h: Record<string, unknown>) => boolean) =>
  waitFor(
    async () => {
      const h = await handle(id);
      return check(h) ? h : undefined;
    },
    { what: `${what} (task ${id}) on Bun`, timeoutMs: 20_000 },
  );

describe('on Bun', () => {
  it('the pinned Bun is the one that runs the processes', () => {
    const pinned = JSON.parse(readFileSync(resolve(root, 'tools/bun/package.json'), 'utf8'))
      .optionalDependencies.bun as string;
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(execFileSync(bunBinary(), ['--version'], { encoding: 'utf8' }).trim()).toBe(pinned);
    // Both processes are Bun's executable, not Node's (Linux: the process's own binary).
    for (const p of procs) {
      expect(readlinkSync(`/proc/${p.child.pid}/exe`)).toMatch(/bun[^/]*$/);
    }
  });

  it('runs a task with progress to completion, and keeps tenants apart', async () => {
    const res = await http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 1500 } } });
    expect(res.status, res.text).toBe(202);
    const id = res.body.taskId as string;
    await until(id, 'progress', (h) => typeof h.progress === 'number');
    const done = await until(id, 'completed', (h) => h.status === 'completed');
    expect(done.result).toEqual({ sleptMs: 1500 });
    expect((await httpClient(url, KEY_B)('GET', `/v1/jobs/${id}`)).status).toBe(404);
  });

  it('asks for input, takes the answer, and streams the changes over SSE', async () => {
    const res = await http('POST', '/v1/jobs', {
      body: { type: 'approval', input: { question: 'Ship it on Bun?' } },
    });
    const id = res.body.taskId as string;
    await until(id, 'input_required', (h) => h.status === 'input_required');
    const stream = readSse(`${url}/v1/jobs/${id}/events`, { key: KEY_A });
    const answered = await http('POST', `/v1/jobs/${id}/input`, {
      body: { input: { approved: true } },
    });
    expect(answered.status, answered.text).toBe(200);
    const { events, closedByServer } = await stream;
    expect(closedByServer).toBe(true); // the stream ended after the terminal event
    expect(events.map((e) => (JSON.parse(e.data) as { status: string }).status).at(-1)).toBe(
      'completed',
    );
    expect((await handle(id)).result).toEqual({ approved: true });
  });

  it('a cancel aborts the running handler', async () => {
    const res = await http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 60_000 } } });
    const id = res.body.taskId as string;
    await until(id, 'running', (h) => typeof h.progress === 'number');
    expect((await http('POST', `/v1/jobs/${id}/cancel`)).status).toBe(200);
    await waitFor(
      async () =>
        procs[1]!.lines.some((l) => l.includes(id) && l.includes('aborted running handler')),
      { what: 'the worker on Bun to abort the handler' },
    );
    expect((await handle(id)).status).toBe('cancelled');
  });
});
