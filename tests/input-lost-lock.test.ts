import { z } from 'zod';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createCatalog, defineJobType } from '@longrun/core';
import { waitFor } from './helpers/http.js';
import { startInProcessWorker } from './helpers/in-process-worker.js';

// A run can lose its job while it works: under load its lock expires before it is renewed, and
// BullMQ's stalled check gives the job to another run (decision 18). When such a run then asks
// for input, parking the job fails with "Lock mismatch". The job is the other run's by then: the
// first run must end writing nothing, not fail (or retry) a task another run is working on. The
// durable calls' park had this fixed (5658c90); `ctx.requestInput` had not. Nor had a run that
// failed: on its last attempt it failed the task the other run was still working on (BullMQ
// itself refuses that run's moveToFailed and leaves the job to the other run).

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
});

const direct = new Redis(inject('redisUrl'));
cleanup.push(() => direct.quit());

/** Lets a handler wait until the test says go; `asked` records what requestInput did. */
const gates = new Map<string, () => void>();
const asked = new Map<string, string>();

const catalog = createCatalog([
  defineJobType({
    name: 'asker',
    input: z.object({}),
    attempts: 1,
    async handler(_input, ctx) {
      await new Promise<void>((resolve) => gates.set(ctx.taskId, resolve));
      try {
        const answer = await ctx.requestInput({
          message: 'approve?',
          schema: z.object({ ok: z.boolean() }),
        });
        asked.set(ctx.taskId, 'answered');
        return answer;
      } catch (err) {
        asked.set(ctx.taskId, err instanceof Error ? err.constructor.name : 'thrown');
        throw err;
      }
    },
  }),
  defineJobType({
    name: 'thrower',
    input: z.object({}),
    attempts: 1,
    async handler(_input, ctx) {
      await new Promise<void>((resolve) => gates.set(ctx.taskId, resolve));
      asked.set(ctx.taskId, 'threw');
      throw new Error('boom');
    },
  }),
]);

async function setup(type: string) {
  const w = await startInProcessWorker(catalog);
  cleanup.push(() => w.close());
  return { tasks: w.tasks, store: w.store, id: await w.submit(type) };
}

/** Runs `type`'s handler to its gate, gives its job to "another run", then lets it go on. */
async function loseTheJob(type: string) {
  const { tasks, store, id } = await setup(type);
  await waitFor(async () => gates.has(id) || undefined, { what: 'the handler to start' });
  const queue = tasks.queueFor(type);
  const lock = `${queue.toKey(id)}:lock`;
  // The stalled check gave the job to another run: its lock now holds that run's token.
  expect(await direct.exists(lock)).toBe(1);
  await direct.set(lock, 'another-run', 'PX', 60_000);
  gates.get(id)!();
  await waitFor(async () => asked.get(id), { what: 'the handler to go on' });
  // Give the run's end (a failure, before the fix) time to reach the record.
  await new Promise((r) => setTimeout(r, 500));
  return { store, queue, lock, id };
}

describe('a run that lost its job', () => {
  it('asks for input: ends writing nothing, the task stays the other run’s', async () => {
    const { store, queue, lock, id } = await loseTheJob('asker');
    expect(asked.get(id)).toBe('InputParked');
    const record = await store.get(id);
    expect(record?.status).toBe('working');
    expect(record?.inputRequest).toBeUndefined();
    // The job was left to the run that holds it: still active under its lock.
    expect(await direct.get(lock)).toBe('another-run');
    expect(await queue.getJobState(id)).toBe('active');
  });

  it('fails on its last attempt: ends writing nothing, the task stays the other run’s', async () => {
    const { store, queue, lock, id } = await loseTheJob('thrower');
    const record = await store.get(id);
    expect(record?.status).toBe('working');
    expect(record?.error).toBeUndefined();
    expect(await direct.get(lock)).toBe('another-run');
    expect(await queue.getJobState(id)).toBe('active');
  });
});
