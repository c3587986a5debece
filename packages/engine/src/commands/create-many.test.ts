import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { TaskRecord } from '@longrun/core';
import { captureAdd } from '../bullmq-adapter.js';
import { createItem, type CreateItem } from '../create-args.js';
import { indexPruneBound, taskKeys } from '../keys.js';
import { createMany } from './create-many.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const newTask = (extra: Partial<TaskRecord> = {}): TaskRecord => {
  const now = Date.now();
  return {
    ...{ id: randomUUID(), tenant: 't', type: 'echo', status: 'working', statusMessage: 'queued' },
    ...{ createdAt: now, updatedAt: now, ttlMs: 60_000, input: {} },
    ...{ cancelRequested: false, awaitingInput: false, inputs: [] },
    ...extra,
  };
};

/** Runs create-many over `items` as TaskStore.createMany sends them. */
function run(keys: ReturnType<typeof taskKeys>, items: CreateItem[]) {
  const groups = new Map<string, number>();
  const restKeys: string[] = [];
  return createMany.run(redis, {
    keys: { openTenants: keys.openTenants },
    args: {
      now: Date.now(),
      pruneBound: indexPruneBound(Date.now() - 86_400_000),
      indexTtl: 120_000,
    },
    items: items.map((item) => {
      const made = createItem(keys, item);
      const job = item.job;
      if (!job) {
        const none = { jobTag: '', jobGroup: 0, jobArgs: '', jobData: '', jobOpts: '' };
        return { keys: made.keys, args: { ...made.args, ...none } };
      }
      let group = groups.get(job.keys[0] ?? '');
      if (group === undefined) {
        groups.set(job.keys[0] ?? '', (group = groups.size + 1));
        restKeys.push(...job.keys);
      }
      const [jobArgs, jobData, jobOpts] = job.args;
      return {
        keys: made.keys,
        args: { ...made.args, jobTag: job.tag, jobGroup: group, jobArgs, jobData, jobOpts },
      };
    }),
    restKeys,
  });
}

describe('create-many', () => {
  it('answers each create in order (ok, dup, full), a later one seeing the earlier ones', async () => {
    const keys = taskKeys(`test-${randomUUID()}`);
    const [a, b, c] = [newTask(), newTask(), newTask()];
    const idem = { key: `${keys.task('')}idem`, value: `${a.id} x` };
    const outcomes = await run(keys, [
      { record: a, idempotency: idem, maxOpenTasks: 2 },
      { record: b, idempotency: { key: idem.key, value: `${b.id} y` } },
      { record: c, maxOpenTasks: 1 },
    ]);
    expect(outcomes).toEqual([
      { created: true },
      { created: false, idempotencyValue: idem.value },
      { created: false, full: true, openTasks: 1 },
    ]);
    expect(await redis.exists(keys.task(a.id), keys.task(b.id), keys.task(c.id))).toBe(1);
  });

  it('adds the BullMQ job of each task it creates, and none for one it refuses', async () => {
    const prefix = `test-${randomUUID()}`;
    const keys = taskKeys(prefix);
    const queue = new Queue('q', { connection: redis, prefix });
    const [a, b] = [newTask(), newTask()];
    const jobOf = (t: TaskRecord) => captureAdd(queue, 'echo', { taskId: t.id }, { jobId: t.id });
    const [jobA, jobB] = [jobOf(a), jobOf(b)];
    if (!jobA || !jobB) throw new Error('BullMQ add not captured');
    const outcomes = await run(keys, [
      { record: a, job: jobA, maxOpenTasks: 1 },
      { record: b, job: jobB, maxOpenTasks: 1 },
    ]);
    expect(outcomes).toEqual([{ created: true }, { created: false, full: true, openTasks: 1 }]);
    expect((await queue.getJob(a.id))?.data).toEqual({ taskId: a.id });
    expect(await queue.getJob(b.id)).toBeUndefined();
    await queue.close();
  });
});
