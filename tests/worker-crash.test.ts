import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';

/** Short locks so a dead worker's job is recovered in about a second, not 30 s. */
const FAST_STALL = { LONGRUN_LOCK_DURATION_MS: '1000', LONGRUN_STALLED_INTERVAL_MS: '500' };

// Everything a test starts, stopped after it whatever happened.
const apis: InProcessApi[] = [];
const procs: Proc[] = [];
afterEach(async () => {
  await Promise.allSettled(procs.splice(0).map((p) => p.kill()));
  await Promise.allSettled(apis.splice(0).map((a) => a.close()));
});

async function api(): Promise<InProcessApi> {
  const started = await startInProcessApi();
  apis.push(started);
  return started;
}

async function worker(prefix: string, env: Record<string, string> = {}): Promise<Proc> {
  const started = await startWorker(prefix, env);
  procs.push(started);
  return started;
}

async function submit(a: InProcessApi, body: unknown): Promise<string> {
  const res = await a.http('POST', '/v1/jobs', { body });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId as string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a task handle as JSON
async function handle(a: InProcessApi, id: string): Promise<any> {
  const res = await a.http('GET', `/v1/jobs/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function waitForStatus(a: InProcessApi, id: string, status: string, timeoutMs = 15_000) {
  return waitFor(
    async () => {
      const h = await handle(a, id);
      return h.status === status ? h : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `task ${id} to be ${status}` },
  );
}

describe('worker crash', () => {
  it('loses nothing when a worker is killed with SIGKILL mid-job', async () => {
    const a = await api();
    const workerA = await worker(a.prefix, FAST_STALL);

    const sleepId = await submit(a, { type: 'sleep', input: { ms: 3000 } });
    const echoes = new Map<string, Record<string, unknown>>();
    for (let i = 0; i < 3; i++) {
      const input = { before: i };
      echoes.set(await submit(a, { type: 'echo', input }), input);
    }

    // Mid-job: the handler has run for a second and reported progress.
    const running = await waitFor(
      async () => {
        const h = await handle(a, sleepId);
        return h.progress !== undefined ? h : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50, what: 'progress on the sleep task' },
    );
    expect(running.status).toBe('working');

    await workerA.kill();
    expect(workerA.child.signalCode).toBe('SIGKILL');
    expect((await handle(a, sleepId)).status).toBe('working');

    // Jobs submitted while no worker is alive wait for one.
    for (let i = 0; i < 3; i++) {
      const input = { during: i };
      echoes.set(await submit(a, { type: 'echo', input }), input);
    }

    await worker(a.prefix, FAST_STALL);
    const done = await waitForStatus(a, sleepId, 'completed', 20_000);
    expect(done.result).toEqual({ sleptMs: 3000 });
    expect(done.error).toBeUndefined();

    for (const [id, input] of echoes) {
      const h = await waitForStatus(a, id, 'completed');
      expect(h.result).toEqual(input);
    }
  });
});

describe('worker shutdown (SIGTERM)', () => {
  it('finishes the running job, exits 0, and takes no new job while draining', async () => {
    const a = await api();
    const w = await worker(a.prefix);

    const sleepId = await submit(a, { type: 'sleep', input: { ms: 2000 } });
    await waitFor(
      async () => {
        const h = await handle(a, sleepId);
        return h.status === 'working' && h.statusMessage === 'running';
      },
      { timeoutMs: 10_000, intervalMs: 25, what: 'the sleep task to start running' },
    );

    const exited = w.stop(); // SIGTERM; resolves with the exit code
    await waitFor(async () => w.lines.some((l) => l.includes('"msg":"worker stopping"')), {
      timeoutMs: 5000,
      what: 'the worker to log "worker stopping"',
    });
    // Shutdown has begun while the job still runs.
    expect((await handle(a, sleepId)).status).toBe('working');

    // Submitted after the worker began stopping: it must not be taken by this worker.
    const echoInput = { after: 'sigterm' };
    const echoId = await submit(a, { type: 'echo', input: echoInput });
    await sleep(1000);
    expect((await handle(a, echoId)).status).toBe('working');

    expect(await exited).toBe(0);
    expect(w.lines.some((l) => l.includes('"msg":"worker stopped"'))).toBe(true);
    expect(w.lines.some((l) => l.includes('grace period over'))).toBe(false);

    const slept = await handle(a, sleepId);
    expect(slept.status).toBe('completed');
    expect(slept.result).toEqual({ sleptMs: 2000 });

    // Nobody took the echo: still waiting, until another worker starts.
    await sleep(300);
    const waiting = await handle(a, echoId);
    expect(waiting.status).toBe('working');
    expect(waiting.statusMessage).toBe('queued');

    await worker(a.prefix);
    const echoed = await waitForStatus(a, echoId, 'completed');
    expect(echoed.result).toEqual(echoInput);
  });
});
