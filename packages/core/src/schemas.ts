import { z } from 'zod';
import { TASK_STATUSES } from './status.js';

/**
 * Task ids are random UUIDs: v4 (122 random bits), or on a shard past the first a v8 naming it
 * (106 random bits; decision 37). Unguessable either way.
 */
export const taskIdSchema = z.uuid();

const taskIdPattern = z.regexes.uuid();
/**
 * `taskIdSchema.safeParse(id).success`, without the parse's allocations: every request on a
 * task checks its id first. Same pattern (zod's own).
 */
export const isTaskId = (id: string): boolean => taskIdPattern.test(id);

/** A JSON object (the shape of a job's input). */
export const jsonObjectSchema = z.record(z.string(), z.unknown());

export const taskStatusSchema = z.enum(TASK_STATUSES);

/** A query-string integer: decimal digits only (no `0x10`, `1e3` or spaces), then bounded. */
export function queryInt(min: number, max: number) {
  return (
    z
      .string()
      .regex(/^\d{1,10}$/, 'must be a whole number')
      .transform(Number)
      .pipe(z.int().min(min).max(max))
      // What documentation (OpenAPI) should say: an integer in range, whatever the parsing path.
      .meta({ type: 'integer', minimum: min, maximum: max })
  );
}

/** The longest delay a Node timer can wait (about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** The smallest ttl a caller may ask for. */
export const MIN_TTL_MS = 1000;

/**
 * Body of `POST /v1/jobs`. Unknown top-level fields are rejected, so `ttl` for `ttlMs` is caught.
 * @example createJobRequestSchema(7 * 86_400_000).parse({ type: 'echo', input: { a: 1 } })
 */
export function createJobRequestSchema(maxTtlMs: number) {
  return z.strictObject({
    type: z.string().min(1).max(100),
    input: jsonObjectSchema.default({}),
    ttlMs: z.int().min(MIN_TTL_MS).max(maxTtlMs).optional(),
    /**
     * 1 runs first. Under fair share (the default) an offset within the tenant's turns: the task
     * runs `priority - 1` turns after its tenant's next. With fair share off, BullMQ's priority:
     * without one, jobs run in arrival order ahead of prioritized ones.
     */
    priority: z.int().min(1).max(2_097_152).optional(),
    callback: callbackSchema.optional(),
    /** Start no sooner than this many ms after the submit (at most the task's ttl). */
    delayMs: z.int().min(0).max(maxTtlMs).optional(),
    /** Start no sooner than this time (ISO 8601 with an offset); in the past: at once. */
    runAt: z.iso.datetime({ offset: true }).optional(),
    /** How long one run may take; no more than the job type's own `timeoutMs`, if it has one. */
    timeoutMs: z.int().min(100).max(Math.min(maxTtlMs, MAX_TIMER_MS)).optional(),
    /** Labels to find the task by (`GET /v1/jobs?tag=`); shown on its handle. */
    tags: tagsSchema.optional(),
  });
}

/** Most tags a task may carry, and the longest tag. */
export const MAX_TAGS = 10;
export const MAX_TAG_LENGTH = 64;

/** One tag: 1 to 64 characters, no control characters. */
export const tagSchema = z
  .string()
  .min(1)
  .max(MAX_TAG_LENGTH)
  .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters');

/** A submit's `tags`: up to 10 distinct tags. */
export const tagsSchema = z
  .array(tagSchema)
  .max(MAX_TAGS)
  .refine((tags) => new Set(tags).size === tags.length, 'must not repeat a tag')
  .describe('Up to 10 distinct labels (1-64 characters each) to find the task by');

/** Where to POST the handle on every status change (webhook), and the HMAC secret to sign with. */
export const callbackSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).max(2048),
  secret: z.string().min(16).max(256).optional(),
});
export type Callback = z.infer<typeof callbackSchema>;
export type CreateJobRequest = z.infer<ReturnType<typeof createJobRequestSchema>>;

/** Query of `GET /v1/jobs/<id>/result`: `wait` holds the request up to that many seconds. */
export const MAX_RESULT_WAIT_SECONDS = 30;
export const resultQuerySchema = z.strictObject({
  wait: queryInt(0, MAX_RESULT_WAIT_SECONDS).optional(),
});

/** An SSE event id: the task's event number (1, 2, …); `0` means "from the start". */
export const eventIdSchema = z.string().regex(/^\d{1,15}$/, 'must be an event id we sent');

/** Query of `GET /v1/jobs/<id>/events`. */
export const eventsQuerySchema = z.strictObject({ lastEventId: eventIdSchema.optional() });

/** Body of `POST /v1/jobs/<id>/input`. */
export const inputResponseRequestSchema = z.strictObject({ input: z.unknown() });

/** Query of `GET /v1/jobs`. */
export const listJobsQuerySchema = z.strictObject({
  status: taskStatusSchema.optional(),
  /** Only tasks of this job type. */
  type: z.string().min(1).max(100).optional(),
  /** Only tasks made by this schedule's ticks. */
  scheduleId: z.uuid().optional(),
  /** Only tasks carrying this tag (read from the tag's own index: a page costs the same). */
  tag: tagSchema.optional(),
  /** `summary` (default): each task's handle without its result; `full`: with it. */
  view: z.enum(['summary', 'full']).optional(),
  limit: queryInt(1, 100).default(20),
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,200}$/, 'cursor must be a value returned as nextCursor')
    .optional(),
});
export type ListJobsQuery = z.infer<typeof listJobsQuerySchema>;

/** Most tasks one `POST /v1/jobs/replay` replays. */
export const MAX_REPLAY = 100;

/** Body of `POST /v1/jobs/replay`: which tasks to replay (newest first) and how many at most. */
export const replayRequestSchema = z.strictObject({
  filter: z
    .strictObject({
      status: taskStatusSchema.optional(),
      type: z.string().min(1).max(100).optional(),
      tag: tagSchema.optional(),
      /** Only tasks created at or after this time (ISO 8601 with an offset). */
      since: z.iso.datetime({ offset: true }).optional(),
    })
    .default({}),
  limit: z.int().min(1).max(MAX_REPLAY),
});
export type ReplayRequest = z.infer<typeof replayRequestSchema>;

/** `Idempotency-Key` header: 1 to 255 visible ASCII characters. */
export const idempotencyKeySchema = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'Idempotency-Key must be 1 to 255 visible ASCII characters');

export const taskErrorSchema = z.looseObject({ message: z.string() });
export type TaskError = z.infer<typeof taskErrorSchema>;

export const inputRequestSchema = z.object({
  message: z.string(),
  schema: jsonObjectSchema,
});
export type InputRequest = z.infer<typeof inputRequestSchema>;

/**
 * One step of a durable task: recorded (`endedAt`: when), or a sleep in progress (`waiting`
 * until `until`).
 */
export const stepSchema = z.union([
  z.object({ name: z.string(), status: z.literal('completed'), endedAt: z.iso.datetime() }),
  z.object({ name: z.string(), status: z.literal('waiting'), until: z.iso.datetime() }),
]);

/** The task handle every task route answers with. */
export const taskHandleSchema = z.object({
  resultType: z.literal('task'),
  taskId: z.string(),
  type: z.string(),
  status: taskStatusSchema,
  statusMessage: z.string(),
  createdAt: z.iso.datetime(),
  lastUpdatedAt: z.iso.datetime(),
  ttlMs: z.int(),
  pollIntervalMs: z.int(),
  progress: z.union([z.number(), jsonObjectSchema]).optional(),
  result: z.unknown().optional(),
  error: taskErrorSchema.optional(),
  inputRequest: inputRequestSchema.optional(),
  /** The schedule whose tick made the task (`POST /v1/schedules`); absent when submitted directly. */
  scheduleId: z.string().optional(),
  /** The submit's tags; absent when it gave none. */
  tags: z.array(z.string()).optional(),
  /** The task this one is a replay of (`POST /v1/jobs/{id}/replay`). */
  replayOf: z.string().optional(),
  /** The submit's input: only on the task's own `GET` with `include=input`. */
  input: jsonObjectSchema.optional(),
  /**
   * The task's OpenTelemetry trace (32 hex digits): its submit, runs and webhook deliveries are
   * spans of this trace. Absent when the API that took the submit had no tracing on.
   */
  traceId: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .optional()
    .describe(
      'The OpenTelemetry trace id of the task: its submit, runs and webhook deliveries are spans of this trace (absent when tracing was off)',
    ),
  /** The A2A context an A2A client started the task in (its `contextId`); absent otherwise. */
  contextId: z.string().optional(),
  /** The task whose handler made this one (`ctx.runTask`, issue 29). */
  parentTaskId: z.string().optional(),
  /** The child tasks this task's handler made, in order. */
  childTaskIds: z.array(z.string()).optional(),
  /**
   * A durable task's newest 50 steps (`ctx.step`, sleeps, children, waitpoints), oldest first;
   * `GET /v1/jobs/{id}/steps` pages all of them (issue 40). Not on list items or events.
   */
  steps: z.array(stepSchema).optional(),
  /** How many steps the durable task recorded. */
  stepCount: z.int().optional(),
  /** Only on an event (SSE, webhook): the step this event recorded or changed. */
  step: stepSchema.optional(),
});

/**
 * Query of `GET /v1/jobs/<id>`: `include=input` adds the task's input to the handle. Other
 * parameters are ignored, as they always were on a poll (a cache-buster must not turn it into 400).
 */
export const getJobQuerySchema = z.object({ include: z.enum(['input']).optional() });
export type TaskHandle = z.infer<typeof taskHandleSchema>;

/** `GET /v1/jobs/<id>/result` once the task is terminal. */
export const taskResultSchema = z.object({
  taskId: z.string(),
  status: z.enum(['completed', 'cancelled', 'failed']),
  result: z.unknown().optional(),
  error: taskErrorSchema.optional(),
});
export type TaskResult = z.infer<typeof taskResultSchema>;

export const taskListSchema = z.object({
  tasks: z.array(taskHandleSchema),
  nextCursor: z.string().nullable(),
});
export type TaskList = z.infer<typeof taskListSchema>;

/** RFC 9457 problem details, with longrun's `errors` list. */
export const problemSchema = z.looseObject({
  type: z
    .string()
    .describe(
      "`/problems/<code>`, relative to the response's URL: a page of the API saying what the problem means and what to do",
    ),
  title: z.string(),
  status: z.int(),
  detail: z.string().optional(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});

/** Turns zod issues into `{path, message}` pairs that name the field. */
export function fieldErrors(error: z.ZodError, root = ''): { path: string; message: string }[] {
  return error.issues.map((issue) => {
    const segments = [root, ...issue.path.map(String)].filter((s) => s !== '');
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys;
      return {
        path: [...segments, keys[0] ?? ''].join('.'),
        message: `Unknown field${keys.length > 1 ? 's' : ''}: ${keys.join(', ')}`,
      };
    }
    return { path: segments.join('.') || '(body)', message: issue.message };
  });
}

/** The JSON body of a webhook delivery. */
export const webhookPayloadSchema = z.object({
  id: z.string(),
  type: z.literal('task.updated'),
  createdAt: z.iso.datetime(),
  task: taskHandleSchema,
});
export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;

/** Query of `GET /v1/jobs/<id>/steps` (issue 40): a page of a durable task's steps, oldest first. */
export const stepsQuerySchema = z.strictObject({
  limit: queryInt(1, 1000).default(100),
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,40}$/, 'cursor must be a value returned as nextCursor')
    .optional(),
});

/** `GET /v1/jobs/<id>/steps`: a page of the task's steps, oldest first. */
export const stepPageSchema = z.object({
  steps: z.array(stepSchema),
  /** How many steps the task recorded. */
  stepCount: z.int(),
  /** Pass it as `cursor` for the next page; `null` after the last. */
  nextCursor: z.string().nullable(),
});
export type StepPage = z.infer<typeof stepPageSchema>;
