import type { z } from 'zod';
import type { Jsonified } from './jsonified.js';

/** What a handler gets besides its input. */
export interface JobContext {
  taskId: string;
  /** 1 for the first run; higher after a retry or a crash recovery. */
  attempt: number;
  /** Aborted when the task is cancelled, wherever in the worker fleet the handler runs. */
  signal: AbortSignal;
  /**
   * Reports progress: a number, a percent (a completed task's reads 100, whatever was reported
   * last), or an object of the handler's own shape (kept as it was); `message` becomes
   * `statusMessage`.
   */
  progress(value: number | Record<string, unknown>, message?: string): Promise<void>;
  /**
   * Asks the caller for input. The first time, the task becomes `input_required` and the job is
   * parked without holding a worker slot; once answered, the handler runs again from the start and
   * this call returns the (validated) answer. Do not catch the error it throws to park the job.
   */
  requestInput<S extends z.ZodType>(request: { message: string; schema: S }): Promise<z.output<S>>;
  /**
   * Runs `fn` until it completes once per task (issue 29), at least once: its JSON result is
   * stored with the task, and every later run of the task (after an answer, a retry, a crash, a
   * wait) gets the stored result without calling `fn`. A worker that dies after `fn` finished and
   * before its result was recorded leaves no record, so the next run calls `fn` again: make its
   * side effects idempotent (key them by `ctx.taskId` and the step name). Names are unique within
   * a task, and must come in the same order on every run (deterministic). A step that throws is
   * retried with the task's attempts. The result is what JSON gives back, on the first run as on
   * a replay (`Jsonified`: a `Date` comes back as its ISO string); a value JSON would not give
   * back (a `Map`, a `Set`, a class instance without `toJSON`, a function, a `bigint`, `NaN`,
   * `undefined` in an array) fails the task with `step-result-not-json`.
   */
  step<T>(name: string, fn: () => Promise<T> | T): Promise<Jsonified<T>>;
  /**
   * Ends the run and resumes the handler after `ms`, holding no worker slot meanwhile. A sleep of
   * 0 or less ends at once; one past the task's expiry (or `Infinity`) fails the task at once
   * with `sleep-past-expiry`, `NaN` with `sleep-invalid`.
   */
  sleep(ms: number): Promise<void>;
  /** As `sleep`, until `date`. */
  sleepUntil(date: Date | number): Promise<void>;
  /**
   * Makes a child task of the same tenant and waits, without a slot, until it is terminal.
   * Its failure is an outcome, not an exception, unless `failOnChildFailure`. `opts` may also
   * give the child's `ttlMs`, `timeoutMs`, `delayMs`, `tags` and `idempotencyKey`, as a submit.
   * @example await ctx.runTask('build-report', { projectId }, { timeoutMs: 600_000 })
   */
  runTask(
    type: string,
    input: Record<string, unknown>,
    opts?: RunTaskOptions & ChildTaskOptions,
  ): Promise<ChildOutcome>;
  /** Makes several child tasks and waits until all are terminal; outcomes in order. */
  runTasks(tasks: readonly ChildTaskRequest[], opts?: RunTaskOptions): Promise<ChildOutcome[]>;
  /** A token anyone may complete with `POST /v1/waitpoints/{id}` (the tenant's key). */
  createWaitpoint(opts?: { timeoutMs?: number }): Promise<Waitpoint>;
  /**
   * Waits, without a slot, until the waitpoint is completed, and returns the posted `data`; past
   * its timeout throws a `DurableTaskError` with `code: "waitpoint-timeout"`.
   */
  waitFor(waitpoint: Waitpoint): Promise<unknown>;
}

/** What `ctx.runTask(s)` may be told. */
export interface RunTaskOptions {
  /**
   * Throw (`code: "child-failed"`) when a child fails or is cancelled; uncaught, it fails the
   * task at once, whatever attempts are left (a retry would replay the same outcomes). Default
   * false.
   */
  failOnChildFailure?: boolean;
}

/**
 * How a child task is made besides its type and input: as a submit's fields (`POST /v1/jobs`),
 * checked the same way (a value a submit would refuse fails the parent with `child-invalid`).
 */
export interface ChildTaskOptions {
  /** How long the child's record lives (default: the worker's `LONGRUN_MAX_TTL_MS`). */
  ttlMs?: number;
  /** How long one run of the child may take (a stuck child otherwise holds its parent). */
  timeoutMs?: number;
  /** Start the child no sooner than this many ms after it is made. */
  delayMs?: number;
  /** Labels to find the child by (`GET /v1/jobs?tag=`). */
  tags?: string[];
  /**
   * Names the child within its parent: the same key in the same parent (another batch, a later
   * run) gives the same child, another parent's same key another child. Default: the child's
   * batch and place in it.
   */
  idempotencyKey?: string;
}

/** A child task `ctx.runTasks` makes. */
export interface ChildTaskRequest extends ChildTaskOptions {
  type: string;
  input: Record<string, unknown>;
}

/** How a child task ended. */
export interface ChildOutcome {
  taskId: string;
  status: 'completed' | 'failed' | 'cancelled';
  result?: unknown;
  error?: { message: string; code?: string };
}

/** A waitpoint token (`ctx.createWaitpoint`). */
export interface Waitpoint {
  id: string;
  /** Where to POST `{data}`, relative to the API (`/v1/waitpoints/<id>`). */
  url: string;
  /** When it times out (ms since the epoch). */
  expiresAt: number;
}

/**
 * What the durable calls throw: a clear `code` (e.g. `waitpoint-timeout`, `step-name-repeated`,
 * `storage-budget`), and for a refusal that passes with time, `retryAfterMs`: when to try again.
 */
export class DurableTaskError extends Error {
  override name = 'DurableTaskError';
  constructor(
    readonly code: string,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** A job type: its name, the zod schema its input must match, and the code that runs it. */
export interface JobTypeDefinition<S extends z.ZodType = z.ZodType, R = unknown> {
  name: string;
  input: S;
  /** Attempts before the task fails (1 = no retries). */
  attempts?: number;
  /** Base of the exponential backoff between attempts. */
  backoffMs?: number;
  /**
   * Names the BullMQ queue this type runs on (`tasks-<queue>`), e.g. for types that share a
   * rate limit's queue. Default: a queue of its own (`tasks.<name>`). Either way only workers
   * serving the type take its jobs; a worker gives back a job of a type it does not serve.
   */
  queue?: string;
  /**
   * How long one run may take (ms): past it the handler's `signal` aborts and the run fails with
   * `error.code: "timeout"` (retried while attempts are left). A submit's `timeoutMs` may ask for
   * less, not more. Default: no timeout.
   */
  timeoutMs?: number;
  /**
   * At most `max` runs start per `durationMs`, across every worker (BullMQ's limiter on the type's
   * queue, so the type needs a `queue` of its own). Tasks over it wait, `working`.
   */
  rateLimit?: { max: number; durationMs: number };
  /**
   * Says the type takes plain text, and where it goes: an A2A message whose only content is text
   * starts it with `{ [textInput]: <the text parts, joined by a blank line> }` (other fields take
   * their defaults). Name a string field of `input`. Unset: the type takes data parts only.
   */
  textInput?: string;
  handler(input: z.output<S>, ctx: JobContext): Promise<R> | R;
}

/**
 * Declares a job type; the API validates with `input`, the worker runs `handler`.
 * @example defineJobType({ name: 'echo', input: z.record(z.string(), z.unknown()), handler: (i) => i })
 */
export function defineJobType<S extends z.ZodType, R>(
  definition: JobTypeDefinition<S, R>,
): JobTypeDefinition<S, R> {
  return definition;
}

export type JobCatalog = ReadonlyMap<string, JobTypeDefinition>;

/**
 * Names no job type may take: the MCP door's own tools (`longrun_get_task`, …) are listed beside
 * the job types, so a type of such a name would shadow one of them (decision 63).
 */
export const RESERVED_JOB_TYPE_PREFIX = 'longrun_';

/**
 * Throws when `name` is reserved (starts with `longrun_`): the registry refuses such a type.
 * @example assertJobTypeName('longrun_get_task') // throws
 */
export function assertJobTypeName(name: string): void {
  if (name.startsWith(RESERVED_JOB_TYPE_PREFIX)) {
    throw new Error(
      `Job type name "${name}" is reserved: names starting with "${RESERVED_JOB_TYPE_PREFIX}" belong to longrun's own MCP tools`,
    );
  }
}

/** Builds a catalog, refusing two types with one name and reserved names. */
export function createCatalog(definitions: readonly JobTypeDefinition[]): JobCatalog {
  const catalog = new Map<string, JobTypeDefinition>();
  for (const definition of definitions) {
    assertJobTypeName(definition.name);
    if (catalog.has(definition.name)) throw new Error(`Duplicate job type: ${definition.name}`);
    catalog.set(definition.name, definition);
  }
  return catalog;
}
