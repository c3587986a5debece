import { z } from 'zod';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createCatalog, defineJobType } from '@longrun/core';
import { createRedis, TaskQueue, TaskStore, TaskWorker } from '@longrun/engine/internal';
import { waitFor } from './helpers/http.js';
import { newRecord } from './helpers/records.js';
import { uniquePrefix } from './helpers/service.js';

// A run's AbortSignal is made only when its handler reads `ctx.signal`. These handlers read it
// late, or never, to show that a cancel still reaches them either way.

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
});

/** What the handlers saw, by task id. */
const seen = new Map<string, { abortedWhenRead?: boolean; reason?: unknown; finished?: boolean }>();
/** Lets a handler wait until the test says go. */
const gates = new Map<string, () => void>();
const gate = (id: string) => new Promise<void>((resolve) => gates.set(id, resolve));

const catalog = createCatalog([
  defineJobType({
    name: 'late-reader',
    input: z.object({}),
    async handler(_input, ctx) {
      await gate(ctx.taskId); // runs without touching the signal until told
      const signal = ctx.signal;
      seen.set(ctx.taskId, { abortedWhenRead: signal.aborted, reason: signal.reason });
      return 'done';
    },
  }),
  defineJobType({
    name: 'never-reader',
    input: z.object({}),
    async handler(_input, ctx) {
      await gate(ctx.taskId);
      seen.set(ctx.taskId, { finished: true });
      return 'done';
    },
  }),
]);

async function setup() {
  const prefix = uniquePrefix();
  const url = inject('redisUrl');
  const producer = createRedis(url, 'producer');
  const connection = createRedis(url, 'worker');
  const subscriber = createRedis(url, 'subscriber');
  cleanup.push(async () => {
    producer.disconnect();
    connection.disconnect();
    subscriber.disconnect();
  });
  for (const conn of [producer, connection, subscriber]) {
    conn.on('error', () => undefined);
    if (conn.status !== 'ready') await new Promise((resolve) => conn.once('ready', resolve));
  }
  const tasks = new TaskQueue({ connection: producer, prefix, types: catalog });
  const store = new TaskStore(producer, prefix, 3_600_000);
  cleanup.push(() => tasks.close());
  const stopped = new Set<string>();
  const quiet = {
    info(obj: object, msg?: string) {
      if (msg === 'cancel: aborted running handler')
        stopped.add((obj as { taskId: string }).taskId);
    },
    warn() {},
    error() {},
  };
  const worker = new TaskWorker({
    connection,
    subscriber,
    prefix,
    maxTtlMs: 3_600_000,
    catalog,
    concurrency: 4,
    logger: quiet,
  });
  cleanup.push(() => worker.close(true));
  await tasks.whenReady();
  await worker.start();
  const submit = async (type: string): Promise<string> => {
    const record = newRecord({ type, ttlMs: 600_000 });
    await store.create(record);
    await tasks.enqueue(record, catalog.get(type)!);
    return record.id;
  };
  /** What the API does on cancel: mark the record, then broadcast. */
  const cancel = async (id: string) => {
    await store.transition(id, 'cancel', { cancelRequested: true });
    await tasks.broadcastCancel(id);
  };
  return { tasks, store, submit, cancel, stopped };
}

describe('a run is stopped whether or not its handler has read ctx.signal', () => {
  it('a signal first read after the cancel is already aborted', async () => {
    const { store, submit, cancel, stopped } = await setup();
    const id = await submit('late-reader');
    await waitFor(async () => gates.has(id) || undefined, { what: 'the handler to start' });
    await cancel(id);
    await waitFor(async () => stopped.has(id) || undefined, { what: 'the broadcast to arrive' });
    gates.get(id)!();
    await waitFor(async () => seen.get(id), { what: 'the handler to read its signal' });
    expect(seen.get(id)).toEqual({ abortedWhenRead: true, reason: new Error('cancelled') });
    const record = await store.get(id);
    expect(record?.status).toBe('cancelled'); // the handler's "done" did not overwrite it
  });

  it('a handler that never reads it finishes, and its result is refused', async () => {
    const { tasks, store, submit, cancel } = await setup();
    const id = await submit('never-reader');
    await waitFor(async () => gates.has(id) || undefined, { what: 'the handler to start' });
    await cancel(id);
    gates.get(id)!();
    await waitFor(async () => seen.get(id), { what: 'the handler to finish' });
    // The job is removed once its run has ended, its completion sent (and refused) first.
    await waitFor(
      async () => ((await tasks.queueFor('never-reader').getJob(id)) ? undefined : true),
      {
        what: 'the job to end',
      },
    );
    const record = await store.get(id);
    expect(record?.status).toBe('cancelled');
    expect(record?.result).toBeUndefined();
  });

  it('without a cancel the signal a handler reads is live', async () => {
    const { store, submit } = await setup();
    const id = await submit('late-reader');
    await waitFor(async () => gates.has(id) || undefined, { what: 'the handler to start' });
    gates.get(id)!();
    await waitFor(async () => seen.get(id), { what: 'the handler to read its signal' });
    expect(seen.get(id)?.abortedWhenRead).toBe(false);
    await waitFor(async () => (await store.get(id))?.status === 'completed' || undefined, {
      what: 'completed',
    });
  });
});
