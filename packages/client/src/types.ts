import type { JobTypeDefinition } from '@longrun/core';
import type { z } from 'zod';

/**
 * A job type described by its types alone, as `longrun types --typescript` generates it: what a
 * submit takes as `input`, and (optionally, if you declare it) what a completed task's `result` is.
 * @example type Map = { sleep: { input: { ms: number }; result?: { sleptMs: number } } }
 */
export interface JobTypeShape {
  input: unknown;
  result?: unknown;
}

/**
 * Job types by name, for `createClient<…>()` to check `submit` at compile time. Each entry is
 * either a shape `{ input: X; result?: R }` (the map `longrun types --typescript` writes,
 * `LongrunJobTypes`) or a job type definition with its zod schema (`typeof jobTypes` of a worker
 * in the same code base, imported with `import type`).
 */
export type JobTypeMap = Record<string, JobTypeDefinition | JobTypeShape>;

/** Whether `C` names its job types (a real catalog) or is the untyped default. */
type IsUntyped<C> = string extends keyof C ? true : false;

/**
 * What `submit(type, …)` accepts as input: the shape's `input`, the definition's zod input type,
 * or any JSON object for an untyped client.
 */
export type JobInput<C extends JobTypeMap, T extends keyof C> =
  IsUntyped<C> extends true
    ? Record<string, unknown>
    : C[T] extends JobTypeDefinition
      ? z.input<C[T]['input']>
      : C[T] extends { input: infer I }
        ? I
        : never;

/**
 * What a completed task of type `T` carries as `result`: the handler's return value, the shape's
 * `result`, or `unknown` when the shape declares none.
 * @example const out = (await lr.wait(id)).result as JobResult<LongrunJobTypes, 'sleep'>
 */
export type JobResult<C extends JobTypeMap, T extends keyof C> =
  IsUntyped<C> extends true
    ? unknown
    : C[T] extends JobTypeDefinition
      ? Awaited<ReturnType<C[T]['handler']>>
      : C[T] extends { result?: infer R }
        ? R
        : unknown;

/** Job type names a client accepts. */
export type JobTypeName<C extends JobTypeMap> = keyof C & string;
