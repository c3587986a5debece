import type { Schedule, TaskHandle, TaskList, TaskResult } from '@longrun/core';
import type { EventsOptions, TaskUpdate } from './events.js';
import type { JobTypeInfo } from './job-types.js';
import type {
  BatchSubmitItem,
  BatchSubmitResult,
  CreateScheduleOptions,
  ListOptions,
  RequestOptions,
  ResultOptions,
  SubmitOptions,
} from './options.js';
import type { JobInput, JobTypeMap, JobTypeName } from './types.js';
import type { WaitOptions } from './wait.js';

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
  /**
   * Completes a durable task's waitpoint (`ctx.createWaitpoint`, issue 29) with `data`, which the
   * waiting handler receives; 404 for an unknown one, 409 if completed before or its task ended.
   */
  completeWaitpoint(
    id: string,
    data: unknown,
    options?: RequestOptions,
  ): Promise<{ waitpointId: string; taskId: string; status: 'completed' }>;
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
