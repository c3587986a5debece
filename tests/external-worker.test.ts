import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { httpClient, waitFor } from './helpers/http.js';
import { startApp, startScript, type Proc } from './helpers/processes.js';
import { API_KEYS, KEY_A, startWorker, uniquePrefix } from './helpers/service.js';

// A job type outside the workspaces: examples/external-worker, built in a temp dir from the
// packed SDK (`npm pack`, as `npm run pack:sdk` does), run beside the stock API and worker
// processes on one Redis and prefix. Nothing in the API knows the type until the worker
// registers it.

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const tmp = mkdtempSync(join(tmpdir(), 'longrun-external-'));
const exampleDir = join(tmp, 'examples', 'external-worker');
const prefix = uniquePrefix();
const stops: (() => Promise<unknown>)[] = [];
let http: ReturnType<typeof httpClient>;

/** npm settings of the surrounding `npm test` (workspace, prefix) must not reach the example. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')),
  );
}

async function startExternal(): Promise<Proc> {
  const proc = await startScript(
    join(exampleDir, 'dist/worker.js'),
    { REDIS_URL: inject('redisUrl'), LONGRUN_PREFIX: prefix, METRICS_PORT: '0' },
    { cwd: exampleDir, timeoutMs: 20_000 },
  );
  stops.push(() => proc.stop());
  return proc;
}

const handle = async (id: string) => (await http('GET', `/v1/jobs/${id}`)).body;

async function until(id: string, what: string, check: (h: Record<string, unknown>) => boolean) {
  return waitFor(
    async () => {
      const h = await handle(id);
      return check(h) ? h : undefined;
    },
    { what: `${what} (task ${id})`, timeoutMs: 20_000 },
  );
}

const exportType = async () =>
  ((await http('GET', '/v1/job-types')).body.jobTypes as { name: string; workers: number }[]).find(
    (t) => t.name === 'invoice-export',
  );

beforeAll(async () => {
  cpSync(join(root, 'examples/external-worker'), exampleDir, {
    recursive: true,
    filter: (src) => !/node_modules|[/\\]dist$/.test(src),
  });
  await run(process.execPath, [join(root, 'scripts/pack-sdk.mjs'), join(tmp, '.packs')], {
    cwd: root,
  });
  const npm = { cwd: exampleDir, env: cleanEnv(), timeout: 240_000 };
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], npm);
  await run('npm', ['run', 'build'], npm);

  const api = await startApp('api', {
    REDIS_URL: inject('redisUrl'),
    LONGRUN_PREFIX: prefix,
    LONGRUN_API_KEYS: API_KEYS,
    PORT: '0',
    HOST: '127.0.0.1',
  });
  stops.push(() => api.stop());
  const stock = await startWorker(prefix);
  stops.push(() => stock.stop());
  http = httpClient(`http://127.0.0.1:${api.ready.port as number}`, KEY_A);
}, 300_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  rmSync(tmp, { recursive: true, force: true });
});

describe('a worker built outside the repository from the packed SDK', () => {
  it('is unknown to the API until it registers, then listed with its schema and queue', async () => {
    const before = await http('POST', '/v1/jobs', {
      body: { type: 'invoice-export', input: { customer: 'acme', months: 1 } },
    });
    expect(before.status).toBe(400);
    await startExternal();
    expect(await exportType()).toMatchObject({
      name: 'invoice-export',
      queue: 'tasks-exports',
      attempts: 3,
      workers: 1,
      inputSchema: { required: ['customer', 'months'] },
    });
    const types = (await http('GET', '/v1/job-types')).body.jobTypes.map(
      (t: { name: string }) => t.name,
    );
    expect(types).toEqual(expect.arrayContaining(['invoice-export', 'sleep', 'echo']));
    // The registered schema validates submits.
    const bad = await http('POST', '/v1/jobs', {
      body: { type: 'invoice-export', input: { customer: 'acme', months: 0 } },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toContainEqual(expect.objectContaining({ path: 'input.months' }));
  });

  it('runs a task of its type end to end: progress, input, result', async () => {
    const res = await http('POST', '/v1/jobs', {
      body: { type: 'invoice-export', input: { customer: 'acme', months: 3, stepMs: 150 } },
    });
    expect(res.status).toBe(202);
    const id = res.body.taskId as string;
    await until(id, 'progress', (h) => typeof h.progress === 'number' && h.progress > 0);
    const asking = await until(id, 'the input request', (h) => h.status === 'input_required');
    expect(asking.inputRequest).toMatchObject({
      message: 'Publish 3 months of invoices for acme?',
    });
    const refused = await http('POST', `/v1/jobs/${id}/input`, {
      body: { input: { approve: 'yes' } },
    });
    expect(refused.status).toBe(422); // the handler's own answer schema
    const answered = await http('POST', `/v1/jobs/${id}/input`, {
      body: { input: { approve: true, by: 'ops' } },
    });
    expect(answered.status).toBe(200);
    const done = await waitFor(
      async () => {
        const r = await http('GET', `/v1/jobs/${id}/result`);
        return r.status === 200 ? r.body : undefined;
      },
      { what: 'the result', timeoutMs: 20_000 },
    );
    expect(done).toMatchObject({
      status: 'completed',
      result: { customer: 'acme', months: 3, rows: 300, approvedBy: 'ops' },
    });
  });

  it('cancels a running task of its type, wherever it runs', async () => {
    const res = await http('POST', '/v1/jobs', {
      body: { type: 'invoice-export', input: { customer: 'slow', months: 24, stepMs: 300 } },
    });
    const id = res.body.taskId as string;
    await until(id, 'progress', (h) => typeof h.progress === 'number' && h.progress > 0);
    const cancel = await http('POST', `/v1/jobs/${id}/cancel`);
    expect(cancel.status).toBe(200);
    const at = await until(id, 'cancelled', (h) => h.status === 'cancelled');
    await new Promise((r) => setTimeout(r, 900)); // three more steps, had the handler gone on
    const later = await handle(id);
    expect(later.status).toBe('cancelled');
    expect(later.progress).toBe(at.progress);
  });

  it('runs a task submitted while no worker of its type was running, once one starts', async () => {
    for (const stop of stops.splice(2)) await stop(); // the external worker(s) only
    await waitFor(async () => (await exportType())?.workers === 0, { what: 'no live worker' });
    const res = await http('POST', '/v1/jobs', {
      body: { type: 'invoice-export', input: { customer: 'later', months: 1, approval: false } },
    });
    expect(res.status).toBe(202);
    expect(res.body.statusMessage).toMatch(/waiting for a worker that serves "invoice-export"/);
    await new Promise((r) => setTimeout(r, 500));
    expect((await handle(res.body.taskId)).status).toBe('working');
    await startExternal();
    const done = await until(res.body.taskId, 'completed', (h) => h.status === 'completed');
    expect(done.statusMessage).not.toMatch(/waiting for a worker/);
    const result = await http('GET', `/v1/jobs/${res.body.taskId}/result`);
    expect(result.body.result).toMatchObject({ customer: 'later', rows: 100, approvedBy: null });
  });
});
