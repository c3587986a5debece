import type { z } from 'zod';

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
