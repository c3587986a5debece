import type { JobsOptions } from 'bullmq';
import type { TaskRecord } from '@longrun/core';
import type { TaskJobData } from './worker/job-data.js';

// What a task's BullMQ job is made of: where its type runs, its data and its options. The same
// for every way a job is added (the create's add, `Queue.add`, a repair's re-add).

/** Where and how a job type's jobs run: what `TaskQueue` needs of a job type. */
export interface JobPlacement {
  name: string;
  /** The queue it names (`tasks-<queue>`); none: a queue of its own (`tasks.<name>`). */
  queue?: string | undefined;
  /** The BullMQ queue its workers announced (the registry's); wins over the two above. */
  queueName?: string | undefined;
  /**
   * Every registered version (the registry's), whose queues may still hold the type's jobs
   * (a rolling deploy, or jobs an older version placed).
   */
  versions?: readonly {
    name: string;
    queue?: string | undefined;
    queueName?: string | undefined;
  }[];
  attempts?: number | undefined;
  backoffMs?: number | undefined;
}

/** Job types by name (a `JobCatalog` is one; so is the registry's `JobTypeDirectory`). */
export interface JobPlacements {
  get(name: string): JobPlacement | undefined;
  values(): Iterable<JobPlacement>;
}

/** Options of one submit that reach BullMQ. */
export interface EnqueueOptions {
  /** BullMQ priority: 1 is the highest; unset runs in arrival order, before prioritized jobs. */
  priority?: number;
  /** Carried in the job data so the worker's log lines can name the request that made the task. */
  requestId?: string;
  /**
   * The run needs more than the input (answers to its input requests): leave the input out of
   * the job, so the worker reads the record.
   */
  readRecord?: boolean;
}

/** The job's data: the worker's first run reads nothing else (see TaskWorker). */
export function jobData(record: JobRecord, opts: EnqueueOptions): TaskJobData {
  return {
    tenant: record.tenant,
    ...(opts.requestId ? { requestId: opts.requestId } : {}),
    ...(opts.readRecord || !record.input
      ? {}
      : { input: record.input, expiresAt: record.createdAt + record.ttlMs }),
    ...(record.timeoutMs ? { timeoutMs: record.timeoutMs } : {}),
    ...(record.traceparent ? { traceparent: record.traceparent } : {}),
    ...(record.parentTaskId ? { parent: record.parentTaskId } : {}),
  };
}

export function jobOptions(
  record: JobRecord,
  definition: JobPlacement,
  opts: EnqueueOptions,
): JobsOptions & { jobId: string } {
  const attempts = definition.attempts ?? 1;
  const priority = opts.priority ?? record.priority;
  // A delayed task's job waits in BullMQ's delayed set until its time (re-added ones too).
  const delay = record.runAt ? record.runAt - Date.now() : 0;
  return {
    jobId: record.id,
    ...(priority ? { priority } : {}),
    ...(delay > 0 ? { delay } : {}),
    attempts,
    ...(attempts > 1
      ? { backoff: { type: 'exponential', delay: definition.backoffMs ?? 1000 } }
      : {}),
    // The task record keeps the outcome; finished BullMQ jobs would only double the memory.
    removeOnComplete: true,
    removeOnFail: true,
  };
}

/** What a job is made from: the record's identity, input, expiry and priority. */
export type JobRecord = Pick<TaskRecord, 'id' | 'tenant' | 'createdAt' | 'ttlMs'> & {
  /** Without it the job makes its run read the record. */
  input?: TaskRecord['input'] | undefined;
  priority?: number | undefined;
  /** A child task's parent (issue 29): its worker tells the parent when the child ends. */
  parentTaskId?: string | undefined;
  runAt?: number | undefined;
  timeoutMs?: number | undefined;
  /** The submit's span (OpenTelemetry): the parent of the job's runs. */
  traceparent?: string | undefined;
};
