import { z } from 'zod';
import { problemSchema, taskHandleSchema, type Callback, type TaskStatus } from '@longrun/core';
import type { TransportOptions } from './transport.js';
import type { JobInput, JobTypeMap, JobTypeName } from './types.js';

/** What the client's methods take, and the batch answer's shape. */

export interface ClientOptions extends TransportOptions {
  /** Where the API lives, e.g. `http://localhost:3000` (a path prefix is kept). */
  baseUrl: string | URL;
  /** A bearer key (`LONGRUN_API_KEYS`). */
  apiKey: string;
}

export interface SubmitOptions {
  /**
   * Makes the submission safe to repeat: the same key with the same body returns the same task.
   * Default: a fresh random key, reused by the client's own retries.
   */
  idempotencyKey?: string;
  /** How long the task is kept, counted from creation. */
  ttlMs?: number;
  /** A URL to POST the handle to on every status change, and the secret to sign it with. */
  callback?: Callback;
  /** 1 runs first: among this tenant's tasks under fair share (the default), else BullMQ's priority. */
  priority?: number;
  /** Start no sooner than this many ms from now (at most the ttl); `statusMessage` is "scheduled". */
  delayMs?: number;
  /** Start no sooner than this time (a `Date` or an ISO 8601 string with an offset). */
  runAt?: Date | string;
  /** How long one run may take (no more than the job type's own timeout). */
  timeoutMs?: number;
  /** Up to 10 distinct labels (1-64 characters) to find the task by (`list({ tag })`). */
  tags?: string[];
  signal?: AbortSignal;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

export interface ResultOptions extends RequestOptions {
  /** Hold the request up to this many seconds (0-30) until the task is terminal. */
  wait?: number;
}

export interface ListOptions extends RequestOptions {
  status?: TaskStatus;
  /** Only tasks of this job type. */
  type?: string;
  /** Only tasks made by this schedule's ticks. */
  scheduleId?: string;
  /** Only tasks carrying this tag. */
  tag?: string;
  /** 1-100, default 20. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/**
 * When a schedule's tasks are submitted: `cron` (read in `tz`, UTC by default) or `everyMs` (the
 * first at once); and what each task gets besides its input, as a submit's options.
 */
export type CreateScheduleOptions = (
  { cron: string; tz?: string; everyMs?: never } | { everyMs: number; cron?: never; tz?: never }
) & {
  /** How long each run's task is kept, counted from its creation. */
  ttlMs?: number;
  /** How long each run may take (no more than the job type's own timeout). */
  timeoutMs?: number;
  /**
   * Makes the create safe to repeat for a day: the same key with the same schedule gets the
   * same schedule back, never a second one. A random one is sent when none is given, so the
   * client's own retries are safe; give your own to repeat the call yourself.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
};

/** One task of {@link LongrunClient.submitBatch}: its type and input, and a submit's options. */
export type BatchSubmitItem<C extends JobTypeMap = JobTypeMap> = {
  [T in JobTypeName<C>]: { type: T; input: JobInput<C, T> } & Omit<SubmitOptions, 'signal'>;
}[JobTypeName<C>];

export const batchResultSchema = z.object({
  results: z.array(
    z.looseObject({
      status: z.int(),
      replayed: z.boolean().optional(),
      task: taskHandleSchema.optional(),
      problem: problemSchema.optional(),
    }),
  ),
});

/** One item's outcome: `status` 202 and its `task`, or another status and its `problem`. */
export type BatchSubmitResult = z.infer<typeof batchResultSchema>['results'][number];
