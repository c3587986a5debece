// A cancel or an answer Redis ran whose reply was lost with the connection is sent again by
// ioredis once it reconnects (`autoResendUnfulfilledCommands`; producers allow one retry). Its
// second run finds the change made and, unguarded, is refused: the caller got 409 for a cancel
// or an answer that took effect, and what follows the write was skipped (a cancel's job removal
// and broadcast, so a running handler was not stopped; an answer's wake-up, so the task waited
// on the reconciler). Each such call now names itself, and a second run answers as the first.
// The API's connection to Redis goes through a relay that cuts the call's reply for real.
import { Redis } from 'ioredis';
import { z } from 'zod';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createCatalog, defineJobType, FIELD } from '@longrun/core';
import { cutRelay } from './helpers/cut-relay.js';
import { waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { startInProcessWorker } from './helpers/in-process-worker.js';
import { startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';

const redisUrl = inject('redisUrl');
const direct = new Redis(redisUrl);
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
  await direct.quit();
});

async function setup(): Promise<{
  api: InProcessApi;
  relay: Awaited<ReturnType<typeof cutRelay>>;
  worker: Proc;
}> {
  const relay = await cutRelay(redisUrl);
  cleanup.push(() => relay.close());
  const api = await startInProcessApi({ redisUrl: relay.url, shards: 1 });
  cleanup.push(() => api.close());
  const worker = await startWorker(api.prefix, { LONGRUN_SHARDS: '1' });
  cleanup.push(() => worker.stop());
  return { api, relay, worker };
}

async function submit(api: InProcessApi, type: string, input: object): Promise<string> {
  const res = await api.http('POST', '/v1/jobs', { body: { type, input } });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId as string;
}

const statusOf = async (api: InProcessApi, id: string) =>
  direct.hget(api.store.keys.task(id), FIELD.status);

/** A request of the transition script for lifecycle event `event` (its arguments name it). */
const transitionCall = (event: string) => (request: string) =>
  /evalsha/i.test(request) && request.includes(`\r\n${event}\r\n`);

describe('a call sent again after a reconnect answers as its first run did', () => {
  it('a cancel: 200, and the running handler is stopped', async () => {
    const { api, relay } = await setup();
    // A first cancel loads the script, so the cut one runs it rather than answering NOSCRIPT.
    const first = await submit(api, 'sleep', { ms: 30_000 });
    expect((await api.http('POST', `/v1/jobs/${first}/cancel`)).status).toBe(200);
    const id = await submit(api, 'sleep', { ms: 30_000 });
    const job = async () => api.tasks.queueFor('sleep').getJob(id);
    await waitFor(async () => (await (await job())?.isActive()) || undefined, {
      what: 'the sleep to run',
    });
    relay.cutNextReply(transitionCall('cancel'));
    const cancelling = api.http('POST', `/v1/jobs/${id}/cancel`);
    await waitFor(async () => (await statusOf(api, id)) === 'cancelled' || undefined, {
      what: 'Redis to run the cancel',
    });
    relay.release();
    const res = await cancelling;
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('cancelled');
    // The broadcast reached the worker: the 30 s sleep ended and its job is gone.
    await waitFor(async () => ((await job()) ? undefined : true), {
      what: 'the cancelled run to end',
    });
  });

  it('an answer: 200, and the task resumes and completes with it', async () => {
    const { api, relay } = await setup();
    const first = await submit(api, 'approval', { question: 'first?' });
    await waitFor(async () => (await statusOf(api, first)) === 'input_required' || undefined, {
      what: 'the first question',
    });
    const body = { input: { approved: true } };
    expect((await api.http('POST', `/v1/jobs/${first}/input`, { body })).status).toBe(200);
    const id = await submit(api, 'approval', { question: 'Deploy?' });
    await waitFor(async () => (await statusOf(api, id)) === 'input_required' || undefined, {
      what: 'the question',
    });
    relay.cutNextReply(transitionCall('answer'));
    const answering = api.http('POST', `/v1/jobs/${id}/input`, { body });
    await waitFor(async () => (await statusOf(api, id)) !== 'input_required' || undefined, {
      what: 'Redis to run the answer',
    });
    relay.release();
    const res = await answering;
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('working');
    await waitFor(async () => (await statusOf(api, id)) === 'completed' || undefined, {
      what: 'the answered task to complete',
    });
    const record = await api.http('GET', `/v1/jobs/${id}`);
    expect(record.body.result).toEqual({ approved: true });
  });
});

describe('a worker’s completion sent again after a reconnect', () => {
  it('is told completed, not refused: its run counts as completed', async () => {
    const relay = await cutRelay(redisUrl);
    cleanup.push(() => relay.close());
    const catalog = createCatalog([
      defineJobType({
        name: 'marker',
        input: z.object({ marker: z.string() }),
        handler: async ({ marker }) => ({ done: `${marker}-done` }),
      }),
    ]);
    const outcomes: string[] = [];
    const w = await startInProcessWorker(catalog, {
      workerUrl: relay.url,
      concurrency: 1,
      onRun: (_type, outcome) => outcomes.push(outcome),
    });
    cleanup.push(() => w.close());
    const { store } = w;
    const submit = (marker: string) => w.submit('marker', { marker });
    // A first task loads the completion script (the cut one then runs it, not NOSCRIPT).
    const first = await submit('first');
    await waitFor(async () => (await store.get(first))?.status === 'completed' || undefined, {
      what: 'the first task',
    });
    const marker = `m${Date.now()}`;
    relay.cutNextReply((request) => /evalsha/i.test(request) && request.includes(`${marker}-done`));
    const id = await submit(marker);
    await waitFor(async () => (await store.get(id))?.status === 'completed' || undefined, {
      what: 'Redis to run the completion',
    });
    relay.release();
    await waitFor(async () => outcomes.length === 2 || undefined, { what: 'the run to end' });
    expect(outcomes).toEqual(['completed', 'completed']);
    expect((await store.get(id))?.result).toEqual({ done: `${marker}-done` });
  });
});
