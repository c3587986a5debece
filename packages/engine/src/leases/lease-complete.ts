import { isTerminal } from '@longrun/core';
import { Job } from 'bullmq';
import type { RunOutcome } from '../worker/job-data.js';
import type { LeaseRef, LeaseRun } from './lease-id.js';
import type { FinishOutcome, LeaseEnded, LeaseRunsOptions, LeaseShard } from './lease-runs.js';

/** Why a lease whose lock is not held any more cannot act: its task ended, is gone, or runs again. */
export async function lapsed(shard: LeaseShard, taskId: string): Promise<LeaseEnded> {
  const view = await shard.store.peek(taskId);
  if (!view) return { kind: 'notFound' };
  return isTerminal(view.status) ? { kind: 'finished', status: view.status } : { kind: 'expired' };
}

/**
 * Completes a lease that carries its run (decision 68) without reading its job: the lock is
 * checked (and renewed) by BullMQ's `extendLock`, the record completed through the shard's
 * completion batch (completions of the same turn share one script call), then the job finished
 * with `moveToCompleted` on a bare `Job` (task jobs are all `removeOnComplete`). What it reads
 * of the job otherwise (type, start, timeout, attempt) the lease id carries. The order is the
 * read path's: a lock not held answers before anything is written, and the record is written
 * before the job ends, so a crash between the two leaves a job whose rerun finds its task done.
 */
export async function completeRun(
  opts: Pick<LeaseRunsOptions, 'shard' | 'puller' | 'leaseMs' | 'ended'>,
  ref: LeaseRef,
  run: LeaseRun,
  result: unknown,
): Promise<FinishOutcome> {
  const shard = opts.shard(ref.shard);
  if (!shard) return { kind: 'notFound' };
  const puller = opts.puller(ref.shard, ref.queue);
  const job = new Job(puller.worker, run.type, {}, { removeOnComplete: true }, ref.jobId);
  const held = await job.extendLock(ref.token, opts.leaseMs);
  if (held !== 1) return lapsed(shard, ref.jobId);
  const pending = shard.completions.complete(ref.jobId, result ?? null);
  await pending.written;
  await job.moveToCompleted(null, ref.token, false);
  const done = await pending.outcome;
  const outcome: RunOutcome = done.ok
    ? 'completed'
    : done.reason === 'missing'
      ? 'skipped'
      : 'cancelled';
  opts.ended(
    { taskId: ref.jobId, type: run.type, attempt: run.attempt, startedAt: run.startedAt },
    outcome,
  );
  if (done.ok) return { kind: 'ok', taskId: ref.jobId, status: 'completed' };
  return { kind: 'finished', status: done.reason === 'missing' ? 'cancelled' : done.current };
}
