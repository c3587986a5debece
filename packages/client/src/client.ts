import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  problemSchema,
  scheduleListSchema,
  scheduleSchema,
  taskHandleSchema,
  taskListSchema,
  taskResultSchema,
  type Callback,
  type Schedule,
  type TaskHandle,
  type TaskList,
  type TaskResult,
  type TaskStatus,
} from '@longrun/core';
import { followEvents, type EventsOptions, type TaskUpdate } from './events.js';
import { jobTypeListSchema, type JobTypeInfo } from './job-types.js';
import { Transport, type TransportOptions } from './transport.js';
import type { JobInput, JobTypeMap, JobTypeName } from './types.js';
import { waitForTask, type WaitOptions } from './wait.js';

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

const batchResultSchema = z.object({
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

/** A client for one longrun API and one key. Create it with {@link createClient}. */
export interface LongrunClient<C extends JobTypeMap = JobTypeMap> {
  /**
   * Submits a task and returns its handle (`status: "working"`) as soon as it is stored.
   * Network errors, 429 and 503 are retried with the same idempotency key, so a retry never
   * starts a second copy.
   */
  submit<T extends JobTypeName<C>>(
    type: T,
    input: JobInput<C, T>,
    options?: SubmitOptions,
  ): Promise<TaskHandle>;
  /**
   * Submits up to 100 tasks in one request; each is created (or refused) on its own, and the
   * outcomes come back in order. Each item gets an idempotency key (a random one unless given),
   * so a retried request creates nothing twice.
   */
  submitBatch(items: BatchSubmitItem<C>[], options?: RequestOptions): Promise<BatchSubmitResult[]>;
  /** The task's current handle. */
  get(id: string, options?: RequestOptions): Promise<TaskHandle>;
  /**
   * Waits until the task is terminal (or asks for input) and returns its handle; check
   * `status`, then read `result`, `error` or `inputRequest`.
   */
  wait(id: string, options?: WaitOptions): Promise<TaskHandle>;
  /** The outcome of a terminal task; a {@link LongrunError} 409 while it is not finished. */
  result(id: string, options?: ResultOptions): Promise<TaskResult>;
  /** Cancels the task (its handler is aborted wherever it runs); 409 if already terminal. */
  cancel(id: string, options?: RequestOptions): Promise<TaskHandle>;
  /** Answers an `input_required` task; `value` must match `inputRequest.schema`. */
  input(id: string, value: unknown, options?: RequestOptions): Promise<TaskHandle>;
  /** Your tasks, newest first, one page at a time. */
  list(options?: ListOptions): Promise<TaskList>;
  /**
   * Every status and progress change as it happens (server-sent events), starting with the
   * current handle and ending after the terminal one; reconnects by itself.
   */
  events(id: string, options?: EventsOptions): AsyncGenerator<TaskUpdate, void, undefined>;
  /** Deletes a terminal task now; 409 while it is not terminal. */
  forget(id: string, options?: RequestOptions): Promise<void>;
  /**
   * The job types workers have registered, sorted by name, with their input's JSON Schema and
   * live worker counts (`workers: 0`: its tasks wait for a worker). `longrun types --typescript`
   * turns them into the type map `createClient<…>()` takes.
   */
  jobTypes(options?: RequestOptions): Promise<JobTypeInfo[]>;
  /**
   * Creates a schedule: each tick of `cron` or `everyMs` submits `type` with `input` for you, an
   * ordinary task whose handle carries the schedule's `scheduleId` (`list({ scheduleId })`).
   * Retried on network errors, 429 and 503 with the same Idempotency-Key, so a retry never makes
   * a second schedule.
   */
  createSchedule<T extends JobTypeName<C>>(
    type: T,
    input: JobInput<C, T>,
    options: CreateScheduleOptions,
  ): Promise<Schedule>;
  /** Your schedules, newest first, each with `nextRunAt` and what its last tick did. */
  listSchedules(options?: RequestOptions): Promise<Schedule[]>;
  /** One schedule. */
  getSchedule(id: string, options?: RequestOptions): Promise<Schedule>;
  /** Deletes a schedule: no tick after this makes a task (the tasks it made stay). */
  deleteSchedule(id: string, options?: RequestOptions): Promise<void>;
}

/**
 * Creates a client. Pass a job type map to have `submit` check type names and inputs at compile
 * time: the one `longrun types --typescript --out src/longrun-types.ts` generates from the API's
 * registered types (or `typeof` a worker's own definitions, in the same code base).
 * @example
 * import type { LongrunJobTypes } from './longrun-types.js';
 * const lr = createClient<LongrunJobTypes>({ baseUrl: 'http://localhost:3000', apiKey });
 * const { taskId } = await lr.submit('sleep', { ms: 5000 });
 * const done = await lr.wait(taskId); // done.status === 'completed', done.result
 */
export function createClient<C extends JobTypeMap = JobTypeMap>(
  options: ClientOptions,
): LongrunClient<C> {
  const transport = new Transport(options);
  const task = (id: string, rest = '') => `v1/jobs/${encodeURIComponent(id)}${rest}`;
  const schedule = (id: string) => `v1/schedules/${encodeURIComponent(id)}`;

  return {
    async submit(type, input, opts = {}) {
      const reply = await transport.request({
        method: 'POST',
        path: 'v1/jobs',
        body: submitBody(type, input, opts),
        headers: { 'idempotency-key': opts.idempotencyKey ?? randomUUID() },
        signal: opts.signal,
        retry: true, // safe: every attempt carries the same Idempotency-Key
        schema: taskHandleSchema,
      });
      return reply.data;
    },

    async submitBatch(items, opts = {}) {
      const tasks = items.map(({ type, input, ...options }) => ({
        ...submitBody(type, input, options),
        idempotencyKey: options.idempotencyKey ?? randomUUID(),
      }));
      const reply = await transport.request({
        method: 'POST',
        path: 'v1/jobs/batch',
        body: { tasks },
        signal: opts.signal,
        retry: true, // safe: every item carries its own idempotency key
        schema: batchResultSchema,
      });
      return reply.data.results;
    },

    async get(id, opts = {}) {
      const reply = await transport.request({
        method: 'GET',
        path: task(id),
        signal: opts.signal,
        retry: true,
        schema: taskHandleSchema,
      });
      return reply.data;
    },

    wait(id, opts) {
      return waitForTask(transport, id, opts);
    },

    async result(id, opts = {}) {
      const reply = await transport.request({
        method: 'GET',
        path: task(id, '/result'),
        query: { wait: opts.wait },
        signal: opts.signal,
        retry: true,
        schema: taskResultSchema,
        extraTimeoutMs: (opts.wait ?? 0) * 1000,
      });
      return reply.data;
    },

    async cancel(id, opts = {}) {
      const reply = await transport.request({
        method: 'POST',
        path: task(id, '/cancel'),
        signal: opts.signal,
        // Not retried: a repeat after a lost answer would report 409 for our own cancel.
        retry: false,
        schema: taskHandleSchema,
      });
      return reply.data;
    },

    async input(id, value, opts = {}) {
      const reply = await transport.request({
        method: 'POST',
        path: task(id, '/input'),
        body: { input: value },
        signal: opts.signal,
        retry: false,
        schema: taskHandleSchema,
      });
      return reply.data;
    },

    async list(opts = {}) {
      const reply = await transport.request({
        method: 'GET',
        path: 'v1/jobs',
        query: {
          status: opts.status,
          type: opts.type,
          scheduleId: opts.scheduleId,
          limit: opts.limit,
          cursor: opts.cursor,
        },
        signal: opts.signal,
        retry: true,
        schema: taskListSchema,
      });
      return reply.data;
    },

    events(id, opts) {
      return followEvents(transport, id, opts);
    },

    async forget(id, opts = {}) {
      await transport.request({
        method: 'DELETE',
        path: task(id),
        signal: opts.signal,
        retry: false,
      });
    },

    async jobTypes(opts = {}) {
      const reply = await transport.request({
        method: 'GET',
        path: 'v1/job-types',
        signal: opts.signal,
        retry: true,
        schema: jobTypeListSchema,
      });
      return reply.data.jobTypes;
    },

    async createSchedule(type, input, opts) {
      const body: Record<string, unknown> = { type, input };
      if (opts.cron !== undefined) body.cron = opts.cron;
      if (opts.tz !== undefined) body.tz = opts.tz;
      if (opts.everyMs !== undefined) body.everyMs = opts.everyMs;
      if (opts.ttlMs !== undefined) body.ttlMs = opts.ttlMs;
      if (opts.timeoutMs !== undefined) body.timeoutMs = opts.timeoutMs;
      const reply = await transport.request({
        method: 'POST',
        path: 'v1/schedules',
        body,
        headers: { 'idempotency-key': opts.idempotencyKey ?? randomUUID() },
        signal: opts.signal,
        retry: true, // safe: every attempt carries the same Idempotency-Key
        schema: scheduleSchema,
      });
      return reply.data;
    },

    async listSchedules(opts = {}) {
      const reply = await transport.request({
        method: 'GET',
        path: 'v1/schedules',
        signal: opts.signal,
        retry: true,
        schema: scheduleListSchema,
      });
      return reply.data.schedules;
    },

    async getSchedule(id, opts = {}) {
      const reply = await transport.request({
        method: 'GET',
        path: schedule(id),
        signal: opts.signal,
        retry: true,
        schema: scheduleSchema,
      });
      return reply.data;
    },

    async deleteSchedule(id, opts = {}) {
      await transport.request({
        method: 'DELETE',
        path: schedule(id),
        signal: opts.signal,
        retry: false,
      });
    },
  };
}

/** A submit's body: the type, the input and the options the API reads. */
function submitBody(
  type: string,
  input: unknown,
  opts: Omit<SubmitOptions, 'idempotencyKey' | 'signal'> & { idempotencyKey?: string },
): Record<string, unknown> {
  const body: Record<string, unknown> = { type, input };
  if (opts.ttlMs !== undefined) body.ttlMs = opts.ttlMs;
  if (opts.callback !== undefined) body.callback = opts.callback;
  if (opts.priority !== undefined) body.priority = opts.priority;
  if (opts.delayMs !== undefined) body.delayMs = opts.delayMs;
  if (opts.runAt !== undefined) {
    body.runAt = opts.runAt instanceof Date ? opts.runAt.toISOString() : opts.runAt;
  }
  if (opts.timeoutMs !== undefined) body.timeoutMs = opts.timeoutMs;
  return body;
}
