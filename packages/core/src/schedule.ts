import { z } from 'zod';
import { createJobRequestSchema, jsonObjectSchema } from './schemas.js';

/** The shortest `everyMs` (and gap between two cron runs) an API accepts unless configured. */
export const DEFAULT_MIN_SCHEDULE_EVERY_MS = 1000;

/** The longest `everyMs`: a year (a longer period is better said with `cron`). */
export const MAX_SCHEDULE_EVERY_MS = 366 * 86_400_000;

/** Schedules one tenant may have unless configured (`LONGRUN_MAX_SCHEDULES`). */
export const DEFAULT_MAX_SCHEDULES = 100;

/**
 * Body of `POST /v1/schedules`: what each run submits (`type`, `input`, `ttlMs`, `timeoutMs`, as
 * `POST /v1/jobs` takes them) and when, given one way: `cron` (in `tz`, UTC by default) or
 * `everyMs`. Whether the cron parses, and whether its runs are far enough apart, the engine
 * checks (it owns the cron parser).
 * @example createScheduleRequestSchema(7 * 86_400_000).parse({ type: 'echo', everyMs: 60_000 })
 */
export function createScheduleRequestSchema(
  maxTtlMs: number,
  minEveryMs = DEFAULT_MIN_SCHEDULE_EVERY_MS,
) {
  const job = createJobRequestSchema(maxTtlMs).shape;
  return z
    .strictObject({
      type: job.type,
      input: jsonObjectSchema.default({}),
      cron: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .describe(
          'A cron pattern (5 fields, or 6 with seconds first), e.g. `*/15 * * * *`; give `cron` or `everyMs`',
        ),
      tz: z
        .string()
        .min(1)
        .max(100)
        .optional()
        .describe('The IANA time zone `cron` is read in, e.g. `Europe/Paris` (default `UTC`)'),
      everyMs: z
        .int()
        .min(minEveryMs)
        .max(MAX_SCHEDULE_EVERY_MS)
        .optional()
        .describe('Run every this many ms, the first run at once; give `cron` or `everyMs`'),
      ttlMs: job.ttlMs.describe("Each run's task is kept this long (default: the API's)"),
      timeoutMs: job.timeoutMs.describe("How long each run's task may take (see `POST /v1/jobs`)"),
    })
    .superRefine((body, ctx) => {
      if ((body.cron === undefined) === (body.everyMs === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: [body.cron === undefined ? 'cron' : 'everyMs'],
          message: 'give either cron or everyMs',
        });
      }
      if (body.tz !== undefined && body.cron === undefined) {
        ctx.addIssue({ code: 'custom', path: ['tz'], message: 'tz applies to cron only' });
      }
    });
}
export type CreateScheduleRequest = z.infer<ReturnType<typeof createScheduleRequestSchema>>;

/** A schedule as the API shows it (`POST`, `GET /v1/schedules[/{id}]`). */
export const scheduleSchema = z.object({
  scheduleId: z.string(),
  type: z.string(),
  input: jsonObjectSchema,
  cron: z.string().optional(),
  tz: z.string().optional(),
  everyMs: z.int().optional(),
  ttlMs: z.int().optional(),
  timeoutMs: z.int().optional(),
  createdAt: z.iso.datetime(),
  nextRunAt: z.iso
    .datetime()
    .nullable()
    .describe('When the next run is due; `null` if none is scheduled'),
  lastRunAt: z.iso.datetime().optional().describe('When a tick last made a task'),
  lastTaskId: z.string().optional().describe('The task the last tick made'),
  lastError: z
    .object({ message: z.string(), at: z.iso.datetime() })
    .optional()
    .describe('Why the last tick made no task (e.g. the input no longer matches the job type)'),
});
export type Schedule = z.infer<typeof scheduleSchema>;

/** `GET /v1/schedules`: every schedule of the tenant, newest first. */
export const scheduleListSchema = z.object({ schedules: z.array(scheduleSchema) });
export type ScheduleList = z.infer<typeof scheduleListSchema>;
