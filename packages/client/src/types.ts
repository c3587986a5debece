import type { JobTypeDefinition } from '@longrun/core';
import type { z } from 'zod';

/**
 * Job types by name, as the worker defines them: pass `typeof jobTypes` (imported with
 * `import type`) to `createClient` and `submit` checks each type's input at compile time.
 */
export type JobTypeMap = Record<string, JobTypeDefinition>;

/** Whether `C` names its job types (a real catalog) or is the untyped default. */
type IsUntyped<C> = string extends keyof C ? true : false;

/**
 * What `submit(type, …)` accepts as input: the job type's zod input type, or any JSON object
 * for an untyped client.
 */
export type JobInput<C extends JobTypeMap, T extends keyof C> =
  IsUntyped<C> extends true ? Record<string, unknown> : z.input<C[T]['input']>;

/**
 * What a completed task of type `T` carries as `result`: the handler's return value.
 * @example const out = (await lr.wait(id)).result as JobResult<typeof jobTypes, 'sleep'>
 */
export type JobResult<C extends JobTypeMap, T extends keyof C> =
  IsUntyped<C> extends true ? unknown : Awaited<ReturnType<C[T]['handler']>>;

/** Job type names a client accepts. */
export type JobTypeName<C extends JobTypeMap> = keyof C & string;
