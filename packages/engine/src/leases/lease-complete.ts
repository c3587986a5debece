import { isTerminal } from '@longrun/core';
import { Job } from 'bullmq';
import type { RunOutcome } from '../worker/job-data.js';
import type { LeaseRef, LeaseRun } from './lease-id.js';
import type { LeasePuller } from './lease-puller.js';
import type { FinishOutcome, LeaseEnded, LeaseRunsOptions, LeaseShard } from './lease-runs.js';

/** Why a lease whose lock is not held any more cannot act: its task ended, is gone, or runs again. */
export async function lapsed(shard: LeaseShard, taskId: string): Promise<LeaseEnded> {
  const view = await shard.store.peek(taskId);
  if (!view) return { kind: 'notFound' };
  return isTerminal(view.status) ? { kind: 'finished', status: view.status } : { kind: 'expired' };
}

/**
 * Completes a lease that carries its run (decision 68) without reading its job: the lock is
 * checked (and renewed) with BullMQ's `extendLocks`, one call for the turn's completions on the
 * queue (`LockRenewals`), the record completed through the shard's
 * completion batch (completions of the same turn share one script call), then the job finished
 * with `moveToCompleted` on a bare `Job` (task jobs are all `removeOnComplete`). What it reads
 * of the job otherwise (type, start, timeout, attempt) the lease id carries. The order is the
 * read path's: a lock not held answers before anything is written, and the record is written
 * before the job ends, so a crash between the two leaves a job whose rerun finds its task done.
 * With `fetch` saying yes for the lease's queue, the finish takes that queue's next job in the
 * same script (BullMQ's `fetchNext`, locked with the same token): it comes back as `next`.
 */
export async function completeRun(
  opts: Pick<LeaseRunsOptions, 'shard' | 'puller' | 'ended'>,
  ref: LeaseRef,
  run: LeaseRun,
  result: unknown,
  fetch?: (puller: LeasePuller) => boolean,
): Promise<FinishOutcome> {
  const shard = opts.shard(ref.shard);
  if (!shard) return { kind: 'notFound' };
  const puller = opts.puller(ref.shard, ref.queue);
  const job = new Job(puller.worker, run.type, {}, { removeOnComplete: true }, ref.jobId);
  if (!(await puller.locks.renew(ref.jobId, ref.token))) return lapsed(shard, ref.jobId);
  const pending = shard.completions.complete(ref.jobId, result ?? null);
  await pending.written;
  // With `fetch`, BullMQ's script takes the queue's next job too (as an SDK worker's does).
  const fetching = fetch?.(puller) ?? false;
  const finished: unknown = await job.moveToCompleted(null, ref.token, fetching);
  const next = fetching ? await puller.nextFrom(finished, ref.token) : undefined;
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
  const taken = next ? { next: { job: next, token: ref.token, puller } } : {};
  if (done.ok) return { kind: 'ok', taskId: ref.jobId, status: 'completed', ...taken };
  if (next) await puller.giveBack(next, ref.token);
  return { kind: 'finished', status: done.reason === 'missing' ? 'cancelled' : done.current };
}
