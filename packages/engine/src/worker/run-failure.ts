import { UnrecoverableError, type Job } from 'bullmq';
import type { TaskStore, TransitionOutcome } from '../task-store.js';

/** How a run failed: what the task's record says, and whether another attempt may follow. */
export interface RunFailure {
  message: string;
  code?: string | undefined;
  /** The run passed its timeout (the retry's message says so). */
  timedOut?: boolean | undefined;
  /** `false`: no retry whatever attempts are left (BullMQ's `UnrecoverableError`). */
  retryable: boolean;
  /** What BullMQ is handed when the job is retried (default: an Error of `message`). */
  error?: Error | undefined;
  /** The failed run's `traceparent`: the retry's run span links to it (decision 65). */
  lastRunTrace?: string | undefined;
}

/**
 * Records a failed run on its task — `retry` while attempts are left and the failure allows it,
 * else `fail` — and answers the error BullMQ's `moveToFailed` is to get (an `UnrecoverableError`
 * when no retry follows). One rule for SDK runs (`TaskRun`) and HTTP workers' leases.
 * @example const end = await recordRunFailure(store, job, id, { message: 'boom', retryable: true })
 */
export async function recordRunFailure(
  store: TaskStore,
  job: Job,
  taskId: string,
  failure: RunFailure,
): Promise<{ outcome: 'retrying' | 'failed'; thrown: Error; transition: TransitionOutcome }> {
  const attempts = job.opts.attempts ?? 1;
  const attempt = job.attemptsMade + 1;
  const { message, code } = failure;
  if (failure.retryable && attempt < attempts) {
    const transition = await store.transition(taskId, 'retry', {
      statusMessage: `attempt ${attempt} ${failure.timedOut ? 'timed out' : 'failed'}; retrying`,
      lastRunTrace: failure.lastRunTrace,
    });
    return { outcome: 'retrying', thrown: failure.error ?? new Error(message), transition };
  }
  const transition = await store.transition(taskId, 'fail', {
    error: code ? { message, code } : { message },
  });
  return { outcome: 'failed', thrown: new UnrecoverableError(message), transition };
}
