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
 * Completes a lease that carries its run (decision 68) without reading its job. One round trip:
 * the record's write, in a script that first checks the lease still holds its job's lock
 * (`LeasedCompletions`: the shard's completions of a turn in one call; nothing is written for a
 * lease that lost its lock), and right behind it on the same connection the job's finish with
 * `moveToCompleted` on a bare `Job` (task jobs are all `removeOnComplete`; BullMQ checks the lock
 * again, and does nothing without it). What it needs of the job otherwise (type, start, timeout,
 * attempt) the lease id carries. The record is written before the job ends, so a crash between
 * the two leaves a job whose rerun finds its task done. With `fetch` saying yes for the lease's
 * queue, the finish takes that queue's next job in the same script (BullMQ's `fetchNext`, locked
 * with the same token): it comes back as `next`.
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
  const lock = puller.worker.toKey(`${ref.jobId}:lock`);
  const pending = shard.leased.complete({ id: ref.jobId, result, lock, token: ref.token });
  await pending.written;
  // With `fetch`, BullMQ's script takes the queue's next job too (as an SDK worker's does). It
  // runs after the record's script (same connection) and checks the lock again.
  const fetching = fetch?.(puller) ?? false;
  const finishing = job.moveToCompleted(null, ref.token, fetching).then(
    (finished: unknown) => ({ finished }),
    (error: unknown) => ({ error }),
  );
  const done = await pending.outcome;
  const end = await finishing;
  const next =
    'finished' in end && fetching ? await puller.nextFrom(end.finished, ref.token) : undefined;
  if (!done.ok && done.reason === 'lost') {
    if (next) await puller.giveBack(next, ref.token);
    return lapsed(shard, ref.jobId);
  }
  // The same result sent again (a retry of a completion whose answer was lost): the record says
  // so (`ok`, from `completed`), and the job was finished by the first; its finish fails here.
  // The first completion's answer is the answer, and the run is not counted twice (issue 41).
  const again = done.ok && done.previous === 'completed';
  // Otherwise a failed finish is the lock gone between the two scripts (its expiry).
  if ('error' in end && !again) throw end.error;
  const outcome: RunOutcome = done.ok
    ? 'completed'
    : done.reason === 'missing'
      ? 'skipped'
      : 'cancelled';
  if (!again) {
    opts.ended(
      { taskId: ref.jobId, type: run.type, attempt: run.attempt, startedAt: run.startedAt },
      outcome,
    );
  }
  const taken = next ? { next: { job: next, token: ref.token, puller } } : {};
  if (done.ok) return { kind: 'ok', taskId: ref.jobId, status: 'completed', ...taken };
  if (next) await puller.giveBack(next, ref.token);
  return {
    kind: 'finished',
    status: done.reason === 'refused' || done.reason === 'changed' ? done.current : 'cancelled',
  };
}
