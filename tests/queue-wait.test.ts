// longrun_job_queue_wait_seconds: how long a task waited for a worker, observed once per task on
// its first run (not on retries), by type.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';

let api: InProcessApi;
let worker: Proc | undefined;

beforeAll(async () => {
  api = await startInProcessApi();
});
afterAll(async () => {
  await worker?.stop();
  await api.close();
});

async function submit(type: string, input: unknown): Promise<string> {
  const res = await api.http('POST', '/v1/jobs', { body: { type, input } });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId as string;
}

const completed = (id: string) =>
  waitFor(
    async () => {
      const h = (await api.http('GET', `/v1/jobs/${id}`)).body;
      return h.status === 'completed' ? h : undefined;
    },
    { what: `task ${id} completed`, timeoutMs: 20_000 },
  );

/** `name{type="<type>"} <value>` from a worker's /metrics. */
async function sample(name: string, type: string): Promise<number | undefined> {
  const port = worker!.ready.metricsPort as number;
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = new RegExp(`^${name}\\{type="${type}"\\} (\\S+)$`, 'm').exec(text);
  return line ? Number(line[1]) : undefined;
}

it('counts the time a task waited for a worker, once per task, not its retries', async () => {
  // Submitted while no worker runs: it waits at least until the worker below starts.
  const submittedAt = Date.now();
  const early = await submit('echo', { n: 1 });
  await new Promise((r) => setTimeout(r, 1200));
  worker = await startWorker(api.prefix);
  const startedBy = Date.now();
  await completed(early);

  expect(await sample('longrun_job_queue_wait_seconds_count', 'echo')).toBe(1);
  const waited = (await sample('longrun_job_queue_wait_seconds_sum', 'echo'))!;
  expect(waited).toBeGreaterThanOrEqual(1.2);
  expect(waited).toBeLessThanOrEqual((startedBy - submittedAt) / 1000 + 5);
  const bucket = async (le: string) =>
    Number(
      /\S+ (\S+)$/.exec(
        (
          await (
            await fetch(`http://127.0.0.1:${worker!.ready.metricsPort as number}/metrics`)
          ).text()
        )
          .split('\n')
          .find((l) =>
            l.startsWith(`longrun_job_queue_wait_seconds_bucket{le="${le}",type="echo"}`),
          ) ?? '',
      )?.[1],
    );
  expect(await bucket('0.5')).toBe(0); // it waited over a second: not in the fast buckets
  expect(await bucket('+Inf')).toBe(1);

  // A delayed task's wait counts from its start time, not from the submit.
  const delayed = (
    await api.http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 1 }, delayMs: 1500 } })
  ).body.taskId as string;
  await completed(delayed);
  expect(await sample('longrun_job_queue_wait_seconds_count', 'sleep')).toBe(1);
  expect(await sample('longrun_job_queue_wait_seconds_sum', 'sleep')).toBeLessThan(1);

  // A task that fails once and is retried: two runs, one wait.
  const flaky = await submit('flaky', { failTimes: 1 });
  await completed(flaky);
  expect(await sample('longrun_job_queue_wait_seconds_count', 'flaky')).toBe(1);
});
