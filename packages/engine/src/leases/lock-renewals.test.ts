import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { Queue, Worker } from 'bullmq';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { LockRenewals } from './lock-renewals.js';

const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
const prefix = `test-locks-${randomUUID()}`;
const queue = new Queue('q', { connection: redis, prefix });
const worker = new Worker('q', null, { connection: redis, prefix, autorun: false });

afterAll(async () => {
  await worker.close(true);
  await queue.obliterate({ force: true });
  await queue.close();
  await redis.quit();
});

/** A job taken with `token` (locked by it for 5 s). */
async function taken(token: string): Promise<string> {
  await queue.add('x', {}, { jobId: randomUUID() });
  const job = await worker.getNextJob(token, { block: false });
  if (!job?.id) throw new Error('no job taken');
  return job.id;
}

describe('LockRenewals', () => {
  it('renews the locks its tokens hold, in one call for a turn, and says which it did not', async () => {
    const locks = new LockRenewals(worker, 60_000);
    const [a, b] = [await taken('tok-a'), await taken('tok-b')];
    const before = await redis.pttl(`${prefix}:q:${a}:lock`);
    const calls: string[] = [];
    const spy = worker.extendJobLocks.bind(worker);
    worker.extendJobLocks = async (ids, tokens, ms) => {
      calls.push(ids.join(','));
      return spy(ids, tokens, ms);
    };
    const outcomes = await Promise.all([
      locks.renew(a, 'tok-a'),
      locks.renew(b, 'not-its-token'),
      locks.renew('no-such-job', 'tok-a'),
    ]);
    expect(outcomes).toEqual([true, false, false]);
    expect(calls).toEqual([`${a},${b},no-such-job`]);
    expect(before).toBeLessThanOrEqual(30_000); // BullMQ's default lock duration
    expect(await redis.pttl(`${prefix}:q:${a}:lock`)).toBeGreaterThan(50_000);
    expect(await redis.get(`${prefix}:q:${b}:lock`)).toBe('tok-b'); // untouched
  });
});
