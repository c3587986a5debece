import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { TaskLog, taskKeys } from '@longrun/engine/internal';
import { waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { startInProcessApi, startWorker, type InProcessApi, oneShard } from './helpers/service.js';

// This file reads one shard's event lists and queues.
oneShard();

// How a worker starts a run: a first run that carries its input in the job (every submit since
// the job carries it) reads nothing and marks the task `running` only once it has run for
// LONGRUN_RUNNING_MARK_MS; with 0, or on any later run, one script checks, marks and reads.

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
});

async function setup(env: Record<string, string> = {}): Promise<{ a: InProcessApi; w: Proc }> {
  const a = await startInProcessApi();
  cleanup.push(() => a.close());
  const w = await startWorker(a.prefix, env);
  cleanup.push(() => w.stop());
  return { a, w };
}

async function submit(a: InProcessApi, type: string, input: unknown): Promise<string> {
  const res = await a.http('POST', '/v1/jobs', { body: { type, input } });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId as string;
}

async function finished(a: InProcessApi, id: string, status = 'completed') {
  return waitFor(
    async () => {
      const res = await a.http('GET', `/v1/jobs/${id}`);
      return res.body.status === status ? res : undefined;
    },
    { what: `${id} ${status}` },
  );
}

/** The statusMessage of every event of a task, oldest first. */
/** The task's status messages, event by event (as SSE replays them: event 1 may be the record's). */
async function messages(redis: Redis, prefix: string, id: string): Promise<string[]> {
  const events = await new TaskLog(redis, taskKeys(prefix)).events(id, undefined, 1000);
  return events.map((e) => e.statusMessage);
}

const redis = new Redis(inject('redisUrl'));
cleanup.push(() => redis.quit());

describe('starting a run', () => {
  it('a fast first run goes from queued to completed without a running mark', async () => {
    const { a } = await setup();
    const id = await submit(a, 'echo', { n: 1 });
    const done = await finished(a, id);
    expect(done.body.result).toEqual({ n: 1 });
    expect(await messages(redis, a.prefix, id)).toEqual(['queued', 'completed']);
    // The job carried the input (and the task's expiry) so the run needed no read of the record.
    expect(await a.tasks.queueFor('echo').getJob(id)).toBeUndefined(); // removed once finished
  });

  it('a longer first run is marked running once it has run for the mark delay', async () => {
    const { a } = await setup({ LONGRUN_RUNNING_MARK_MS: '50' });
    const id = await submit(a, 'sleep', { ms: 1500 });
    const running = await waitFor(
      async () => {
        const res = await a.http('GET', `/v1/jobs/${id}`);
        return res.body.statusMessage === 'running' ? res : undefined;
      },
      { what: 'the running mark' },
    );
    expect(running.body.status).toBe('working');
    await finished(a, id);
    const seen = await messages(redis, a.prefix, id);
    // sleep reports progress too; the mark comes once, before the outcome.
    expect(seen.slice(0, 2)).toEqual(['queued', 'running']);
    expect(seen.at(-1)).toBe('completed');
    expect(seen.filter((m) => m === 'running')).toHaveLength(1);
  });

  it('with LONGRUN_RUNNING_MARK_MS=0 every run is checked and marked before it starts', async () => {
    const { a } = await setup({ LONGRUN_RUNNING_MARK_MS: '0' });
    const id = await submit(a, 'echo', { n: 2 });
    await finished(a, id);
    expect(await messages(redis, a.prefix, id)).toEqual(['queued', 'running', 'completed']);
  });

  it('a job taken after its task was cancelled is skipped, whichever order the news arrives in', async () => {
    const { a, w } = await setup({ LOG_LEVEL: 'debug' });
    const queue = a.tasks.queueFor('echo');
    await queue.pause();
    const id = await submit(a, 'echo', { n: 3 });
    // The cancel broadcast alone (as when the API's cancel raced the job being taken): the
    // record still says working, so only the broadcast can stop the run.
    await a.tasks.broadcastCancel(id);
    await waitFor(async () => w.lines.some((l) => l.includes(id) && l.includes('remembered')), {
      what: 'the worker to remember the cancel',
    });
    await queue.resume();
    await waitFor(
      async () => {
        const counts = await queue.getJobCounts('waiting', 'prioritized');
        return (counts.waiting ?? 0) + (counts.prioritized ?? 0) === 0; // fair share: prioritized
      },
      { what: 'the job to be taken' },
    );
    await waitFor(
      async () =>
        w.lines.some(
          (l) => l.includes(id) && l.includes('"outcome":"skipped"') && l.includes('run ended'),
        ),
      { what: 'the run to be skipped' },
    );
    const handle = await a.http('GET', `/v1/jobs/${id}`);
    expect(handle.body.status).toBe('working');
    expect(handle.body.result).toBeUndefined();
    expect(await messages(redis, a.prefix, id)).toEqual(['queued']);
  });

  it('a first run whose task was cancelled without a broadcast is aborted by its running mark', async () => {
    // As if the API that cancelled crashed before removing the job and broadcasting: the record
    // says cancelled, the job still waits, and the first run reads nothing before starting.
    const { a, w } = await setup({ LONGRUN_RUNNING_MARK_MS: '100' });
    const queue = a.tasks.queueFor('sleep');
    await queue.pause();
    const id = await submit(a, 'sleep', { ms: 60_000 });
    const cancelled = await a.store.transition(id, 'cancel', { cancelRequested: true });
    expect(cancelled.ok).toBe(true);
    await queue.resume();
    // The 60 s handler ends within the wait below only if the refused mark aborted it.
    await waitFor(
      async () =>
        w.lines.some(
          (l) => l.includes(id) && l.includes('"outcome":"cancelled"') && l.includes('run ended'),
        ),
      { what: 'the run to end as cancelled', timeoutMs: 10_000 },
    );
    const handle = await a.http('GET', `/v1/jobs/${id}`);
    expect(handle.body.status).toBe('cancelled');
    expect(await messages(redis, a.prefix, id)).toEqual(['queued', 'cancelled by request']);
  });

  it('a re-enqueued task with answers is read from its record (input is not in the job)', async () => {
    const { a } = await setup();
    const id = await submit(a, 'approval', { question: 'ship it?' });
    await finished(a, id, 'input_required');
    // Take the parked job away, so answering has to enqueue a new one.
    expect(await a.tasks.removeJob(id, 'approval')).toBe(true);
    const answered = await a.http('POST', `/v1/jobs/${id}/input`, {
      body: { input: { approved: true } },
    });
    expect(answered.status, answered.text).toBe(200);
    const done = await finished(a, id);
    expect(done.body.result).toEqual({ approved: true });
  });
});
