import { z } from 'zod';

/** One registered version of a job type (during a rolling deploy a type has several). */
export const jobTypeVersionSchema = z.looseObject({
  version: z.string(),
  /** When this version was first registered. */
  registeredAt: z.iso.datetime(),
  /** When a worker last said it serves this version. */
  lastSeenAt: z.iso.datetime(),
  /** Workers serving this version now. */
  workers: z.int().min(0),
});
export type JobTypeVersionInfo = z.infer<typeof jobTypeVersionSchema>;

/**
 * A job type as `GET /v1/job-types` lists it: the version submits are validated with, where its
 * jobs go, and its input's JSON Schema (draft 2020-12). Fields a newer API adds are kept.
 */
export const jobTypeInfoSchema = z.looseObject({
  name: z.string(),
  /** The version submits are validated with: the newest one a live worker serves. */
  version: z.string(),
  /** The BullMQ queue its jobs go to. */
  queue: z.string(),
  attempts: z.int(),
  backoffMs: z.int(),
  /** How long one run may take by default, and at most; absent: no timeout. */
  timeoutMs: z.int().optional(),
  /** At most `max` runs start per `durationMs`, across every worker; absent: no limit. */
  rateLimit: z.object({ max: z.int(), durationMs: z.int() }).optional(),
  /** JSON Schema (draft 2020-12) of the input, as the API checks it. */
  inputSchema: z.record(z.string(), z.unknown()),
  /** Live workers serving `version`; 0 means its tasks wait until one starts. */
  workers: z.int().min(0),
  registeredAt: z.iso.datetime(),
  /** Every registered version, newest first. */
  versions: z.array(jobTypeVersionSchema),
});
export type JobTypeInfo = z.infer<typeof jobTypeInfoSchema>;

export const jobTypeListSchema = z.object({ jobTypes: z.array(jobTypeInfoSchema) });
