import { isTerminal, type TaskStatus } from '@longrun/core';
import { Job } from 'bullmq';
import type { CompletionBatch } from '../completion-batch.js';
import type { LeasedCompletions } from './leased-completions.js';
import type { JobTypeDirectory } from '../registry/job-type-directory.js';
import type { TaskStore } from '../task-store.js';
import type { RunOutcome, TaskJobData } from '../worker/job-data.js';
import { refuseResult } from '../worker/result-check.js';
import { RunTimedOut } from '../worker/run-control.js';
import { recordRunFailure } from '../worker/run-failure.js';
import type { LeaseIds, LeaseRef } from './lease-id.js';
import { completeRun, lapsed } from './lease-complete.js';
import type { LeasePuller } from './lease-puller.js';

/** One shard's record side, as the lease calls need it. */
export interface LeaseShard {
  store: TaskStore;
  completions: CompletionBatch;
  /** Completions of leases that carry their run, each checking its lock (decision 68). */
  leased: LeasedCompletions;
}

export interface LeaseRunsOptions {
  leaseMs: number;
  maxResultBytes: number;
  types: JobTypeDirectory;
  /** Checks and reads lease ids (decision 79); the secret is read from Redis once. */
  ids(): Promise<LeaseIds>;
  shard(n: number): LeaseShard | undefined;
  puller(n: number, queue: string): LeasePuller;
  /** Why a JSON Schema cannot be compiled, or null. */
  schemaFault(schema: Record<string, unknown>): string | null;
  ended(run: EndedRun, outcome: RunOutcome): void;
}

/** A run that ended, as the broker reports it (its log line and metrics). */
export interface EndedRun {
  taskId: string;
  type: string;
  attempt: number;
  /** When the run started (ms), if known. */
  startedAt: number | undefined;
}

/** The run `job` is, as `ended` reports it. */
export function runOf(job: Job): EndedRun {
  return {
    taskId: job.id ?? '',
    type: job.name,
    attempt: attemptOf(job),
    startedAt: job.processedOn,
  };
}

/**
 * What a lease call may answer besides its own success: `notFound` (not a lease id of this
 * service), `expired` (its lock lapsed: the job runs again elsewhere), `finished` (the task is
 * cancelled or otherwise ended: the run must stop), `timedOut` (the run passed its timeout and
 * was failed or retried as an SDK run would be).
 */
export type LeaseEnded =
  | { kind: 'notFound' }
  | { kind: 'expired' }
  | { kind: 'finished'; status: TaskStatus }
  | { kind: 'timedOut'; timeoutMs: number };

export type HeartbeatOutcome = { kind: 'ok'; cancelled: boolean; leaseMs: number } | LeaseEnded;
export type FinishOutcome =
  | {
      kind: 'ok';
      taskId: string;
      status: TaskStatus;
      /** A job its finish took next (`complete` with `fetch`): the caller leases or gives it back. */
      next?: { job: Job; token: string; puller: LeasePuller };
    }
  | { kind: 'resultRefused'; code: string; message: string }
  | { kind: 'badSchema'; message: string }
  | LeaseEnded;

/** A run's attempt: BullMQ's failed attempts, plus the runs whose lease (lock) lapsed. */
export function attemptOf(job: Job): number {
  return job.attemptsMade + (job.stalledCounter ?? 0) + 1;
}

interface OpenLease {
  ref: LeaseRef;
  job: Job;
  shard: LeaseShard;
}

/**
 * The calls on a lease after it was handed out: heartbeat, complete, fail, ask for input. Each
 * reads the job by the id the lease names and checks its lock with the lease's token (renewing
 * it: `job.extendLock`), so any API replica serves any lease; then it records the change on the
 * task as an SDK run would (the same completion batch, failure rule and result cap), and ends
 * BullMQ's side with the manual-processing API (`moveToCompleted`, `moveToFailed`,
 * `moveToDelayed`).
 */
export class LeaseRuns {
  constructor(private readonly opts: LeaseRunsOptions) {}

  /** Renews the lease and records progress; `cancelled` once the task has ended meanwhile. */
  async heartbeat(
    worker: string,
    leaseId: string,
    update: { progress?: number | undefined; message?: string | undefined },
  ): Promise<HeartbeatOutcome> {
    const lease = await this.open(worker, leaseId);
    if ('kind' in lease) {
      return lease.kind === 'finished' || lease.kind === 'timedOut'
        ? { kind: 'ok', cancelled: true, leaseMs: this.opts.leaseMs }
        : lease;
    }
    const { job, shard } = lease;
    const id = job.id ?? '';
    let status: TaskStatus | undefined;
    if (update.progress !== undefined || update.message !== undefined) {
      const outcome = await shard.store.transition(id, 'progress', {
        ...(update.progress !== undefined ? { progress: update.progress } : {}),
        ...(update.message !== undefined ? { statusMessage: update.message } : {}),
        started: true,
      });
      status = outcome.ok
        ? 'working'
        : outcome.reason === 'missing'
          ? 'cancelled'
          : outcome.current;
    } else {
      status = (await shard.store.peek(id))?.status ?? 'cancelled';
    }
    if (isTerminal(status)) {
      // Cancelled (or gone): the run ends here, and its job with it, as an SDK run's would.
      await this.release(job, lease.ref.token, 'cancelled');
      return { kind: 'ok', cancelled: true, leaseMs: this.opts.leaseMs };
    }
    return { kind: 'ok', cancelled: false, leaseMs: this.opts.leaseMs };
  }

  /**
   * Completes the task with `result` (refused over the result cap: the task fails). `fetch`: may
   * the finish take the next job of the lease's queue (decision 68)? It comes back as `next`.
   */
  async complete(
    worker: string,
    leaseId: string,
    result: unknown,
    fetch?: (puller: LeasePuller) => boolean,
  ): Promise<FinishOutcome> {
    // A lease of this worker's, in time and with a result under the cap: no job read (its run
    // is what the signed id says, decision 79).
    const carried = (await this.opts.ids()).decode(worker, leaseId);
    if (!carried) return { kind: 'notFound' };
    const { run } = carried;
    const inTime = run.timeoutMs === 0 || Date.now() - run.startedAt <= run.timeoutMs;
    if (inTime && !refuseResult(result, this.opts.maxResultBytes)) {
      return completeRun(this.opts, carried, run, result, fetch);
    }
    const lease = await this.openRef(carried);
    if ('kind' in lease) return lease;
    const { job, shard, ref } = lease;
    const id = job.id ?? '';
    const refused = refuseResult(result, this.opts.maxResultBytes);
    if (refused) {
      await this.failRun(lease, { message: refused.message, code: refused.code, retryable: false });
      return { kind: 'resultRefused', ...refused };
    }
    const pending = shard.completions.complete(id, result ?? null);
    await pending.written;
    await job.moveToCompleted(null, ref.token, false);
    const done = await pending.outcome;
    const outcome: RunOutcome = done.ok
      ? 'completed'
      : done.reason === 'missing'
        ? 'skipped'
        : 'cancelled';
    this.opts.ended(runOf(job), outcome);
    if (done.ok) return { kind: 'ok', taskId: id, status: 'completed' };
    return { kind: 'finished', status: done.reason === 'missing' ? 'cancelled' : done.current };
  }

  /**
   * A completion whose body was too large to read (`bodyBytes`): its result is over the cap
   * whatever it holds, so the task fails as `complete` would fail it.
   */
  async refuseLarge(worker: string, leaseId: string, bodyBytes: number): Promise<FinishOutcome> {
    const lease = await this.open(worker, leaseId);
    if ('kind' in lease) return lease;
    const refused = {
      code: 'result-too-large',
      message: `The result is over the ${this.opts.maxResultBytes}-byte limit (LONGRUN_MAX_RESULT_BYTES): its completion is ${bodyBytes} bytes; store it elsewhere and return a reference`,
    };
    await this.failRun(lease, { ...refused, retryable: false });
    return { kind: 'resultRefused', ...refused };
  }

  /** Fails the run: retried while attempts are left unless `retry` is false. */
  async fail(
    worker: string,
    leaseId: string,
    failure: { code?: string | undefined; message: string; retry?: boolean | undefined },
  ): Promise<FinishOutcome> {
    const lease = await this.open(worker, leaseId);
    if ('kind' in lease) return lease;
    const outcome = await this.failRun(lease, {
      message: failure.message,
      code: failure.code,
      retryable: failure.retry !== false,
    });
    return {
      kind: 'ok',
      taskId: lease.job.id ?? '',
      status: outcome === 'retrying' ? 'working' : 'failed',
    };
  }

  /**
   * Parks the task for input (`input_required`): the job waits until the answer promotes it,
   * and the task's next lease carries the answer.
   */
  async input(
    worker: string,
    leaseId: string,
    request: { message: string; schema: Record<string, unknown> },
  ): Promise<FinishOutcome> {
    const fault = this.opts.schemaFault(request.schema);
    if (fault) return { kind: 'badSchema', message: fault };
    const lease = await this.open(worker, leaseId);
    if ('kind' in lease) return lease;
    const { job, shard, ref } = lease;
    const id = job.id ?? '';
    const data = (job.data ?? {}) as TaskJobData;
    const record = data.expiresAt === undefined ? await shard.store.get(id) : null;
    const expiresAt = data.expiresAt ?? (record ? record.createdAt + record.ttlMs : undefined);
    // Park first, then say so: once the record reads input_required the job is promotable. A
    // park refused since `open` checked the lock ("Lock mismatch": another run holds the job; or
    // the job removed by a cancel) ends the lease as one found lapsed, writing nothing; with
    // Redis away, so does `lapsed`'s read, as a 503 (tests/lease-lost-lock.test.ts).
    const until = (expiresAt ?? Date.now() + 86_400_000) + 1000;
    const moved = await job.moveToDelayed(until, ref.token).then(
      () => true,
      () => false,
    );
    if (!moved) return lapsed(shard, id);
    const parked = await shard.store.transition(id, 'park', {
      statusMessage: request.message,
      awaitingInput: true,
      inputRequest: { message: request.message, schema: request.schema },
    });
    this.opts.ended(runOf(job), parked.ok ? 'input_required' : 'cancelled');
    if (parked.ok) return { kind: 'ok', taskId: id, status: 'input_required' };
    return { kind: 'finished', status: parked.reason === 'missing' ? 'cancelled' : parked.current };
  }

  /**
   * The lease's job with its lock renewed, or why there is none. A run past its timeout is ended
   * here (failed or retried, as an SDK run is), since nothing else watches a remote handler.
   */
  private async open(worker: string, leaseId: string): Promise<OpenLease | LeaseEnded> {
    // Checked first: an id this worker was not given builds nothing (no queue, no connection).
    const ref = (await this.opts.ids()).decode(worker, leaseId);
    return ref ? this.openRef(ref) : { kind: 'notFound' };
  }

  private async openRef(ref: LeaseRef): Promise<OpenLease | LeaseEnded> {
    const shard = this.opts.shard(ref.shard);
    if (!shard) return { kind: 'notFound' };
    const puller = this.opts.puller(ref.shard, ref.queue);
    // The job's hash and the lock's renewal in one write: the renewal needs only the id.
    const [job, held] = await Promise.all([
      Job.fromId(puller.worker, ref.jobId),
      new Job(puller.worker, '', {}, {}, ref.jobId).extendLock(ref.token, this.opts.leaseMs),
    ]);
    if (!job || held !== 1) return lapsed(shard, ref.jobId);
    const lease = { ref, job, shard };
    const timeoutMs =
      ((job.data ?? {}) as TaskJobData).timeoutMs ?? this.opts.types.get(job.name)?.timeoutMs;
    if (timeoutMs && job.processedOn && Date.now() - job.processedOn > timeoutMs) {
      const error = new RunTimedOut(timeoutMs);
      await this.failRun(lease, {
        message: error.message,
        code: 'timeout',
        timedOut: true,
        retryable: true,
        error,
      });
      return { kind: 'timedOut', timeoutMs };
    }
    return lease;
  }

  private async failRun(
    lease: OpenLease,
    failure: {
      message: string;
      code?: string | undefined;
      timedOut?: boolean;
      retryable: boolean;
      error?: Error;
    },
  ): Promise<'retrying' | 'failed'> {
    const { job, shard, ref } = lease;
    const end = await recordRunFailure(shard.store, job, job.id ?? '', failure);
    // BullMQ retries (with the type's backoff) or fails the job as it would a thrown error.
    await job.moveToFailed(end.thrown, ref.token, false);
    this.opts.ended(runOf(job), end.outcome);
    return end.outcome;
  }

  /** Ends a run whose task ended meanwhile: its job is done with (as an SDK run returns). */
  private async release(job: Job, token: string, outcome: RunOutcome): Promise<void> {
    await job.moveToCompleted(null, token, false);
    this.opts.ended(runOf(job), outcome);
  }
}
