import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { z } from 'zod';
import {
  callbackSchema,
  createJobRequestSchema,
  createScheduleRequestSchema,
  DEFAULT_MIN_SCHEDULE_EVERY_MS,
  eventIdSchema,
  eventsQuerySchema,
  idempotencyKeySchema,
  inputResponseRequestSchema,
  listJobsQuerySchema,
  MAX_RESULT_WAIT_SECONDS,
  PROBLEM_CODES,
  PROBLEM_TYPES_PATH,
  problemSchema,
  resultQuerySchema,
  scheduleListSchema,
  scheduleSchema,
  taskHandleSchema,
  taskIdSchema,
  taskListSchema,
  taskResultSchema,
  taskStatusSchema,
  WEBHOOK_HEADERS,
  webhookPayloadSchema,
} from '@longrun/core';
import { apiIndexSchema } from './routes/index.js';

/** A JSON Schema or OpenAPI object, as plain JSON. */
type Json = Record<string, unknown>;

export interface OpenApiOptions {
  /** Upper bound of `ttlMs`, as the API enforces it. */
  maxTtlMs: number;
  /** Lower bound of a schedule's `everyMs` (default 1000, `LONGRUN_SCHEDULE_MIN_EVERY_MS`). */
  minEveryMs?: number | undefined;
  /** The job types registered when the document is built; each one's input schema is published. */
  jobTypes: readonly { name: string; version?: string; inputSchema: Record<string, unknown> }[];
}

/** A registered job type as `GET /v1/job-types` lists it. */
const jobTypeVersionSchema = z.object({
  version: z.string(),
  registeredAt: z.iso.datetime(),
  lastSeenAt: z.iso.datetime(),
  workers: z.number().int(),
});
const jobTypeSchema = z.object({
  name: z.string(),
  version: z.string().describe('The version submits are validated with'),
  queue: z.string().describe('The BullMQ queue its jobs go to'),
  attempts: z.number().int(),
  backoffMs: z.number().int(),
  timeoutMs: z
    .number()
    .int()
    .optional()
    .describe(
      "How long one run may take by default, and at most (a submit's timeoutMs may ask for less)",
    ),
  rateLimit: z
    .object({ max: z.number().int(), durationMs: z.number().int() })
    .optional()
    .describe('At most `max` runs start per `durationMs`, across every worker'),
  inputSchema: z.record(z.string(), z.unknown()).describe('JSON Schema (draft 2020-12)'),
  workers: z.number().int().describe('Live workers serving the validating version'),
  registeredAt: z.iso.datetime(),
  versions: z.array(jobTypeVersionSchema).describe('Every registered version, newest first'),
});
const jobTypeListSchema = z.object({ jobTypes: z.array(jobTypeSchema) });

/** Bodies of the operational routes; nothing else validates them, so they live here. */
const healthSchema = z.object({ status: z.literal('ok') });
const readySchema = z.object({
  status: z.enum(['ready', 'unavailable']),
  redis: z.literal('down').optional(),
});
/** A 409 on a task also names the status it is in. */
const taskConflictSchema = problemSchema.extend({ taskStatus: taskStatusSchema.optional() });

/** What a fresh handle looks like; a test checks it against the generated `TaskHandle` schema. */
const HANDLE_EXAMPLE = {
  resultType: 'task',
  taskId: '8b7c2f0e-3f6a-4d6e-9a55-0c7f4f1d2b11',
  type: 'sleep',
  status: 'working',
  statusMessage: 'queued',
  createdAt: '2026-11-30T10:30:00.000Z',
  lastUpdatedAt: '2026-11-30T10:30:00.000Z',
  ttlMs: 86_400_000,
  pollIntervalMs: 5000,
};

const version = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/**
 * The OpenAPI 3.1 document of the API. Every schema in it is generated with `z.toJSONSchema`
 * (draft 2020-12, the dialect of OpenAPI 3.1) from the zod schemas the routes validate with, so
 * the document cannot drift from what the API accepts.
 * @example res.json(buildOpenApiDocument({ maxTtlMs: 7 * 86_400_000, catalog }))
 */
export function buildOpenApiDocument({
  maxTtlMs,
  minEveryMs = DEFAULT_MIN_SCHEDULE_EVERY_MS,
  jobTypes: registered,
}: OpenApiOptions): Json {
  const requests = componentSchemas('input', {
    CreateJobRequest: createJobRequestSchema(maxTtlMs),
    CreateScheduleRequest: createScheduleRequestSchema(maxTtlMs, minEveryMs),
    Callback: callbackSchema,
    InputResponseRequest: inputResponseRequestSchema,
    BatchSubmitRequest: z.strictObject({
      tasks: z
        .array(
          createJobRequestSchema(maxTtlMs).extend({
            idempotencyKey: idempotencyKeySchema
              .optional()
              .describe("This item's Idempotency-Key, as on a single submit"),
          }),
        )
        .min(1)
        .max(100),
    }),
  });
  const schemas = {
    // Requests are described as the client writes them (defaults make fields optional) ...
    ...requests,
    ...createJobRequests(requests.CreateJobRequest as Json, registered),
    CreateScheduleRequest: withoutInputDefault(requests.CreateScheduleRequest as Json),
    // ... responses as the API sends them.
    ...componentSchemas('output', {
      TaskStatus: taskStatusSchema,
      TaskHandle: taskHandleSchema,
      TaskResult: taskResultSchema,
      TaskList: taskListSchema,
      Schedule: scheduleSchema,
      ScheduleList: scheduleListSchema,
      Problem: problemSchema,
      TaskConflictProblem: taskConflictSchema,
      WebhookPayload: webhookPayloadSchema,
      Health: healthSchema,
      ApiIndex: apiIndexSchema,
      Readiness: readySchema,
      JobTypeList: jobTypeListSchema,
      BatchSubmitResult: z.object({
        results: z
          .array(
            z.object({
              status: z.number().int().describe('What `POST /v1/jobs` would have answered'),
              replayed: z
                .literal(true)
                .optional()
                .describe('The earlier task of this idempotencyKey'),
              task: taskHandleSchema.optional().describe('The handle, when status is 202'),
              problem: problemSchema.optional().describe('Why this item created nothing'),
            }),
          )
          .describe("One entry per submitted item, in the items' order"),
      }),
    }),
    ...Object.fromEntries(registered.flatMap((job) => jobInputSchemas(job))),
  };
  const jobTypes = registered.length
    ? registered.map(({ name }) => `\`${name}\``).join(', ')
    : 'none registered yet';

  return {
    openapi: '3.1.0',
    info: {
      title: 'longrun',
      version,
      summary: 'Redis-backed job queue with a task-handle HTTP facade',
      description: [
        'Submit work that outlives a request, get a **task handle** at once, then poll it, wait on it,',
        'stream its events, or be called back. Every `/v1` route needs `Authorization: Bearer <key>`;',
        "another tenant's task answers `404` exactly like a missing one. Errors are RFC 9457",
        '`application/problem+json` with an `errors: [{path, message}]` list naming the field; a',
        "problem's `type` (`/problems/<code>`, relative to the response's URL) is a page of this",
        'API saying what it means and what to do (`GET /problems` lists them all).',
        '',
        'Statuses: `working`, `input_required`, `completed`, `cancelled`, `failed`. Honour',
        '`Retry-After` (seconds) / `pollIntervalMs` when polling.',
      ].join('\n'),
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'tasks', description: 'Submit, inspect, answer, cancel and collect tasks' },
      {
        name: 'live updates',
        description: 'Server-Sent Events and webhooks (to long-poll, pass `wait` to the result)',
      },
      {
        name: 'schedules',
        description: 'Recurring tasks: each tick of a cron or period submits one task',
      },
      { name: 'operations', description: 'Health, readiness, metrics and this document' },
    ],
    paths: paths(jobTypes, minEveryMs),
    // Inline, not a $ref: Swagger UI does not render a webhook whose path item is a reference.
    webhooks: { 'task.updated': webhookDelivery() },
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key; it names the tenant that owns the tasks it creates.',
        },
      },
      parameters: parameters(),
      headers: headers(),
      responses: problemResponses(),
      pathItems: { TaskUpdatedDelivery: webhookDelivery() },
    },
  };
}

function paths(jobTypes: string, minEveryMs: number): Json {
  const task = [ref('parameters', 'TaskId')];
  const schedule = [ref('parameters', 'ScheduleId')];
  const handle = (description: string, extra: Json = {}) => ({
    description,
    ...extra,
    content: {
      'application/json': { schema: ref('schemas', 'TaskHandle'), example: HANDLE_EXAMPLE },
    },
  });
  const retryWhileRunning = {
    headers: { 'Retry-After': ref('headers', 'RetryAfterWhileRunning') },
  };
  const common = {
    '401': ref('responses', 'Unauthorized'),
    '429': ref('responses', 'TooManyRequests'),
    '503': ref('responses', 'Unavailable'),
  };
  const onTask = { ...common, '404': ref('responses', 'NotFound') };
  const body = {
    '413': ref('responses', 'ContentTooLarge'),
    '415': ref('responses', 'UnsupportedMediaType'),
    '507': ref('responses', 'StoreFull'),
  };
  const open = { security: [], tags: ['operations'] };
  const onSchedule = { ...common, '404': ref('responses', 'ScheduleNotFound') };

  return {
    '/v1/schedules': {
      post: {
        operationId: 'createSchedule',
        tags: ['schedules'],
        summary: 'Create a schedule (a recurring task)',
        description: [
          'Each tick submits `{type, input, ttlMs?, timeoutMs?}` as `POST /v1/jobs` would, for the',
          "caller's tenant: an ordinary task whose handle carries `scheduleId` (list them with",
          '`GET /v1/jobs?scheduleId=`). Ticks come from `cron` (5 fields, or 6 with seconds; read',
          'in `tz`, default UTC) or `everyMs` (the first at once), never both. One task per tick,',
          'however many API and worker processes run. A cron that does not parse, an unknown time',
          `zone, or runs closer than ${minEveryMs} ms apart are \`400\`; the type and input are`,
          'checked as a submit checks them (unknown type `400`, input that does not match `422`).',
          'A tick whose submit is refused later (the input no longer matches, a tenant cap) makes',
          'no task and sets `lastError`. With `Idempotency-Key`, a create retried with the same body',
          'within a day gets the same schedule back (`Idempotent-Replayed`), never a second one;',
          'deleting the schedule frees the key.',
        ].join(' '),
        parameters: [ref('parameters', 'IdempotencyKey')],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: ref('schemas', 'CreateScheduleRequest'),
              example: { type: 'echo', input: { report: 'daily' }, cron: '0 6 * * *', tz: 'UTC' },
            },
          },
        },
        responses: {
          '201': {
            description:
              'Stored; `nextRunAt` is when its first tick is due (or, with `Idempotent-Replayed`, the schedule this key created before).',
            headers: {
              Location: ref('headers', 'ScheduleLocation'),
              'Idempotent-Replayed': ref('headers', 'IdempotentReplayed'),
            },
            content: { 'application/json': { schema: ref('schemas', 'Schedule') } },
          },
          '400': ref('responses', 'BadRequest'),
          '409': problem(
            'The tenant has as many schedules as allowed (`LONGRUN_MAX_SCHEDULES`), or the schedule for this `Idempotency-Key` is being removed (retry).',
          ),
          '422': ref('responses', 'UnprocessableContent'),
          ...common,
          ...body,
        },
      },
      get: {
        operationId: 'listSchedules',
        tags: ['schedules'],
        summary: "List the caller's schedules, newest first",
        responses: {
          '200': jsonResponse('Every schedule of the tenant.', 'ScheduleList'),
          ...common,
        },
      },
    },
    '/v1/schedules/{id}': {
      parameters: schedule,
      get: {
        operationId: 'getSchedule',
        tags: ['schedules'],
        summary: 'Get a schedule, with when it runs next and what its last tick did',
        responses: { '200': jsonResponse('The schedule.', 'Schedule'), ...onSchedule },
      },
      delete: {
        operationId: 'deleteSchedule',
        tags: ['schedules'],
        summary: 'Delete a schedule: no tick after this makes a task',
        description:
          "The schedule's tasks stay (they expire with their `ttlMs`); a tick already under way makes its task only if that happens before the delete answers: none does after.",
        responses: { '204': { description: 'Deleted.' }, ...onSchedule },
      },
    },
    '/v1/job-types': {
      get: {
        operationId: 'listJobTypes',
        tags: ['tasks'],
        summary: 'List the registered job types',
        description: [
          'Every job type a worker has registered (workers publish their types, with the input',
          "schema generated from the type's zod schema, and renew them with a heartbeat). A type",
          'with `workers: 0` still accepts tasks: they wait for a worker. During a rolling deploy a',
          'type has several versions; submits are validated with the newest one a live worker',
          'serves (`version`).',
        ].join(' '),
        responses: {
          '200': {
            description: 'The registered job types, by name',
            content: { 'application/json': { schema: ref('schemas', 'JobTypeList') } },
          },
          ...common,
        },
      },
    },
    '/v1/jobs/batch': {
      post: {
        operationId: 'submitJobs',
        tags: ['tasks'],
        summary: 'Submit up to 100 tasks in one request',
        description: [
          'Each item is validated and created on its own, exactly as by `POST /v1/jobs` (an item',
          "may carry its own `idempotencyKey`); one item's refusal does not stop the others. The",
          "answer is `207` with each item's status and its handle or problem, in order. A bad",
          'envelope (no `tasks`, none, more than 100) is one `400` and creates nothing. The whole',
          'request counts once against the rate limit.',
        ].join(' '),
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: ref('schemas', 'BatchSubmitRequest'),
              example: {
                tasks: [
                  { type: 'sleep', input: { ms: 2000 } },
                  { type: 'echo', input: { n: 1 }, idempotencyKey: 'import-2026-12-02-row-1' },
                ],
              },
            },
          },
        },
        responses: {
          '207': {
            description: "Each item's outcome, in order",
            content: { 'application/json': { schema: ref('schemas', 'BatchSubmitResult') } },
          },
          '400': ref('responses', 'BadRequest'),
          ...common,
          ...body,
        },
      },
    },
    '/v1/jobs': {
      post: {
        operationId: 'submitJob',
        tags: ['tasks'],
        summary: 'Submit a task',
        description: [
          `Validates the envelope (unknown fields such as \`ttl\` are \`400\`), then \`input\``,
          `against the job type's registered schema (\`422\`; see the \`JobInput.*\` schemas and`,
          `\`GET /v1/job-types\`). Job types registered when this document was served: ${jobTypes}.`,
          'A type no worker has registered is `400`.',
          'Answers `202` only once Redis stored the task. With `callback`, every status change is',
          'POSTed to `callback.url` (see the `task.updated` webhook).',
        ].join(' '),
        parameters: [ref('parameters', 'IdempotencyKey')],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: ref('schemas', 'CreateJobRequest'),
              example: { type: 'sleep', input: { ms: 20000 }, ttlMs: 3600000 },
            },
          },
        },
        responses: {
          '202': handle('Stored and queued (or, with `Idempotent-Replayed`, the earlier task).', {
            headers: {
              Location: ref('headers', 'Location'),
              'Retry-After': ref('headers', 'RetryAfter'),
              'Idempotent-Replayed': ref('headers', 'IdempotentReplayed'),
            },
          }),
          '400': ref('responses', 'BadRequest'),
          '409': problem(
            'The task for this `Idempotency-Key` is being created or removed; retry.',
            {
              retry: true,
            },
          ),
          '422': ref('responses', 'UnprocessableContent'),
          ...common,
          ...body,
        },
        callbacks: {
          taskUpdated: {
            '{$request.body#/callback/url}': { $ref: '#/components/pathItems/TaskUpdatedDelivery' },
          },
        },
      },
      get: {
        operationId: 'listJobs',
        tags: ['tasks'],
        summary: "List the caller's tasks, newest first",
        description:
          "Each item is a summary: the task handle without `result` (the task's own `GET` has it), so a page costs the same whatever the tasks weigh. `view=full` includes each result.",
        parameters: queryParameters(listJobsQuerySchema),
        responses: {
          '200': {
            description: 'A page of tasks; pass `nextCursor` as `cursor` for the next one.',
            content: { 'application/json': { schema: ref('schemas', 'TaskList') } },
          },
          '400': ref('responses', 'BadRequest'),
          ...common,
        },
      },
    },
    '/v1/jobs/{id}': {
      parameters: task,
      get: {
        operationId: 'getJob',
        tags: ['tasks'],
        summary: 'Get the task handle',
        description: '`result`, `error` or `inputRequest` appear as the status calls for.',
        responses: { '200': handle('The handle.', retryWhileRunning), ...onTask },
      },
      delete: {
        operationId: 'deleteJob',
        tags: ['tasks'],
        summary: 'Forget a finished task now',
        responses: {
          '204': { description: 'Forgotten.' },
          '409': problem('The task is not terminal; cancel it first.', { task: true }),
          ...onTask,
        },
      },
    },
    '/v1/jobs/{id}/result': {
      parameters: task,
      get: {
        operationId: 'getJobResult',
        tags: ['tasks'],
        summary: 'Get the outcome of a finished task (optionally long-polling)',
        description: `With \`wait\` (0-${MAX_RESULT_WAIT_SECONDS} s) the request is held until the task is terminal or the wait ends, then answered exactly as without it.`,
        parameters: queryParameters(resultQuerySchema),
        responses: {
          '200': {
            description: 'The task is terminal: its result, or the error that ended it.',
            content: { 'application/json': { schema: ref('schemas', 'TaskResult') } },
          },
          '400': ref('responses', 'BadRequest'),
          '409': problem('Not finished yet; `taskStatus` says where it is.', {
            retry: true,
            task: true,
          }),
          ...onTask,
        },
      },
    },
    '/v1/jobs/{id}/cancel': {
      parameters: task,
      post: {
        operationId: 'cancelJob',
        tags: ['tasks'],
        summary: 'Cancel a task',
        description:
          'The task is `cancelled` at once and never becomes `completed`; a running handler is aborted wherever it runs. No body is needed (a JSON body is accepted and ignored).',
        responses: {
          '200': handle('The cancelled task.'),
          '400': ref('responses', 'BadRequest'),
          '409': problem('The task is already terminal.', { task: true }),
          ...onTask,
          ...body,
        },
      },
    },
    '/v1/jobs/{id}/input': {
      parameters: task,
      post: {
        operationId: 'answerJobInput',
        tags: ['tasks'],
        summary: 'Answer an input_required task',
        description: "`input` is validated against the handle's `inputRequest.schema`.",
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: ref('schemas', 'InputResponseRequest'),
              example: { input: { approved: true, comment: 'go' } },
            },
          },
        },
        responses: {
          '200': handle('Answer accepted; the task is `working` again.', retryWhileRunning),
          '400': ref('responses', 'BadRequest'),
          '409': problem(
            'The task is not waiting for input (`not-awaiting-input`), or was answered meanwhile and now asks another question (`question-changed`).',
            { task: true },
          ),
          '422': ref('responses', 'UnprocessableContent'),
          ...onTask,
          ...body,
        },
      },
    },
    '/v1/jobs/{id}/events': {
      parameters: task,
      get: {
        operationId: 'streamJobEvents',
        tags: ['live updates'],
        summary: 'Stream task events (Server-Sent Events)',
        description: [
          'Starts with a `retry:` line and the current handle, then one event per status or',
          'progress change; closes after the terminal event. Each `data:` line is a `TaskHandle`.',
          'Comment lines (`: ping`) every 15 s keep proxies from closing the stream. Resume with',
          '`Last-Event-ID` (or `?lastEventId=`): nothing after that id is skipped.',
        ].join(' '),
        parameters: [ref('parameters', 'LastEventId'), ...queryParameters(eventsQuerySchema)],
        responses: {
          '200': {
            description: 'An event stream; each event is `task` with a `TaskHandle` as data.',
            content: {
              'text/event-stream': {
                schema: { type: 'string', description: 'See `TaskHandle` for each `data:` line.' },
                example:
                  'retry: 5000\n\nid: 3\nevent: task\ndata: {"resultType":"task","taskId":"8b7c2f0e-3f6a-4d6e-9a55-0c7f4f1d2b11","status":"working",…}\n\n',
              },
            },
          },
          '400': ref('responses', 'BadRequest'),
          ...onTask,
        },
      },
    },
    '/': {
      get: {
        ...open,
        operationId: 'index',
        summary: 'Where to go from here: links to the docs, this document and the task routes',
        responses: { '200': jsonResponse('The index.', 'ApiIndex') },
      },
    },
    '/healthz': {
      get: {
        ...open,
        operationId: 'health',
        summary: 'The process is up',
        responses: { '200': jsonResponse('Up.', 'Health') },
      },
    },
    '/readyz': {
      get: {
        ...open,
        operationId: 'ready',
        summary: 'Redis answers',
        responses: {
          '200': jsonResponse('Ready.', 'Readiness'),
          '503': {
            ...jsonResponse('Redis does not answer.', 'Readiness'),
            headers: { 'Retry-After': ref('headers', 'RetryAfter') },
          },
        },
      },
    },
    '/metrics': {
      get: {
        ...open,
        operationId: 'metrics',
        summary: 'Prometheus metrics',
        responses: {
          '200': {
            description: 'Prometheus text exposition format.',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
        },
      },
    },
    '/openapi.json': {
      get: {
        ...open,
        operationId: 'openapi',
        summary: 'This document (OpenAPI 3.1)',
        responses: {
          '200': {
            description: 'The OpenAPI document.',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
        },
      },
    },
    '/docs': {
      get: {
        ...open,
        operationId: 'docs',
        summary: 'Human-readable API reference rendered from this document',
        responses: {
          '200': {
            description: 'An HTML page.',
            content: { 'text/html': { schema: { type: 'string' } } },
          },
        },
      },
    },
    [PROBLEM_TYPES_PATH]: {
      get: {
        ...open,
        operationId: 'listProblemTypes',
        summary: 'Every problem type: what it means and what to do',
        description:
          'One section per code, whose `id` is the code: `/problems#not-found` is the same text as `/problems/not-found`.',
        responses: {
          '200': {
            description: 'An HTML page.',
            content: { 'text/html': { schema: { type: 'string' } } },
          },
        },
      },
    },
    [`${PROBLEM_TYPES_PATH}/{code}`]: {
      get: {
        ...open,
        operationId: 'getProblemType',
        summary: "One problem type (what a problem's `type` resolves to)",
        parameters: [
          {
            name: 'code',
            in: 'path',
            required: true,
            description: 'The last segment of a problem `type`.',
            schema: { type: 'string', enum: PROBLEM_CODES },
          },
        ],
        responses: {
          '200': {
            description: 'An HTML page with a section whose `id` is the code.',
            content: { 'text/html': { schema: { type: 'string' } } },
          },
          '404': problem('No problem type has this code.'),
        },
      },
    },
  };
}

function parameters(): Json {
  return {
    TaskId: {
      name: 'id',
      in: 'path',
      required: true,
      description: 'The task id (`taskId` of the handle). Anything but an id of yours is `404`.',
      schema: jsonSchema(taskIdSchema, 'input'),
    },
    ScheduleId: {
      name: 'id',
      in: 'path',
      required: true,
      description: 'The schedule id (`scheduleId`). Anything but an id of yours is `404`.',
      schema: jsonSchema(taskIdSchema, 'input'),
    },
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Same key + same body (per tenant) returns the same task, run once (on a schedule create: the same schedule); same key + another body is `422`.',
      schema: jsonSchema(idempotencyKeySchema, 'input'),
    },
    LastEventId: {
      name: 'Last-Event-ID',
      in: 'header',
      required: false,
      description: 'Resume after this event id (sent by browsers on reconnect).',
      schema: jsonSchema(eventIdSchema, 'input'),
    },
  };
}

function headers(): Json {
  const seconds = { type: 'integer', minimum: 1 };
  return {
    Location: {
      description: 'Where the task handle lives: `/v1/jobs/{id}`.',
      schema: { type: 'string', format: 'uri-reference' },
    },
    ScheduleLocation: {
      description: 'Where the schedule lives: `/v1/schedules/{id}`.',
      schema: { type: 'string', format: 'uri-reference' },
    },
    RetryAfter: { description: 'Seconds to wait before asking again.', schema: seconds },
    RetryAfterWhileRunning: {
      description:
        'Seconds to wait before polling again; sent only while the task is not terminal.',
      schema: seconds,
    },
    IdempotentReplayed: {
      description: '`true` when an earlier request with this `Idempotency-Key` made the task.',
      schema: { type: 'string', const: 'true' },
    },
    WWWAuthenticate: {
      description: 'The scheme to use: `Bearer realm="longrun"`.',
      schema: { type: 'string' },
    },
  };
}

function problemResponses(): Json {
  return {
    BadRequest: problem(
      'The envelope is wrong: not JSON, an unknown field (e.g. `ttl`), a bad query or header, an unknown job type.',
    ),
    Unauthorized: {
      ...problem('No or an unknown bearer key.'),
      headers: { 'WWW-Authenticate': ref('headers', 'WWWAuthenticate') },
    },
    NotFound: problem('No such task for this tenant (or it expired, or the id is not a task id).'),
    ScheduleNotFound: problem(
      'No such schedule for this tenant (or it was deleted, or the id is not a schedule id).',
    ),
    ContentTooLarge: problem('The body is larger than 1 MiB.'),
    UnsupportedMediaType: problem('The body is not `application/json`.'),
    UnprocessableContent: problem(
      'The envelope is fine but the input does not match its schema, or an `Idempotency-Key` was reused with another body.',
    ),
    TooManyRequests: problem(
      "Over this tenant's request rate, or (on submit) its cap of unfinished tasks, or (on an event stream) the open streams allowed (`too-many-streams`); retry after `Retry-After`.",
      { retry: true },
    ),
    Unavailable: problem('Redis did not answer in time; retry after `Retry-After`.', {
      retry: true,
    }),
    StoreFull: problem('Redis is out of memory; retry later.', { retry: true }),
  };
}

/** A `POST <callback.url>` that longrun makes on every status change. */
function webhookDelivery(): Json {
  const header = (name: string, description: string, schema: Json, required = true) => ({
    name,
    in: 'header',
    required,
    description,
    schema,
  });
  return {
    post: {
      summary: 'A task changed status',
      security: [],
      description:
        'Sent at least once per status change (not per progress update), retried with exponential backoff until the receiver answers 2xx. Receivers dedupe on the delivery id.',
      parameters: [
        header(WEBHOOK_HEADERS.deliveryId, 'Unique per delivery; equals the body `id`.', {
          type: 'string',
        }),
        header(WEBHOOK_HEADERS.timestamp, 'Unix seconds when this attempt was signed.', {
          type: 'string',
          pattern: '^\\d+$',
        }),
        header(
          WEBHOOK_HEADERS.signature,
          'With `callback.secret` only: `v1=` + hex HMAC-SHA256(secret, `"<timestamp>.<raw body>"`).',
          { type: 'string', pattern: '^v1=[0-9a-f]{64}$' },
          false,
        ),
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('schemas', 'WebhookPayload') } },
      },
      responses: {
        '2XX': { description: 'Delivered; not retried.' },
        default: { description: 'Not delivered; retried with backoff.' },
      },
    },
  };
}

/** A problem+json response; `retry` adds `Retry-After`, `task` the `taskStatus` member. */
function problem(description: string, { retry = false, task = false } = {}): Json {
  return {
    description,
    ...(retry ? { headers: { 'Retry-After': ref('headers', 'RetryAfter') } } : {}),
    content: {
      'application/problem+json': {
        schema: ref('schemas', task ? 'TaskConflictProblem' : 'Problem'),
      },
    },
  };
}

function jsonResponse(description: string, schema: string): Json {
  return { description, content: { 'application/json': { schema: ref('schemas', schema) } } };
}

function ref(kind: string, name: string): Json {
  return { $ref: `#/components/${kind}/${name}` };
}

/** One query parameter per property of a strict zod query schema. */
function queryParameters(schema: z.ZodObject): Json[] {
  const object = jsonSchema(schema, 'input') as {
    properties?: Record<string, Json>;
    required?: string[];
  };
  return Object.entries(object.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: object.required?.includes(name) ?? false,
    schema: property,
  }));
}

/** Converts one zod schema to a JSON Schema fit to embed in the document. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  return embeddable(
    z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }),
  );
}

/**
 * Converts named zod schemas to `components.schemas`; a schema used inside another becomes a
 * `$ref` to its component instead of a copy.
 */
function componentSchemas(io: 'input' | 'output', named: Record<string, z.ZodType>): Json {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  });
  return Object.fromEntries(Object.entries(schemas).map(([id, s]) => [id, embeddable(s)]));
}

/**
 * `CreateJobRequest` as a union keyed on `type`: one variant per registered job type, whose
 * `type` is that name and whose `input` is that type's `JobInput.<type>` schema, so a client
 * generated from the document checks each input when it compiles. `input` carries no `default`
 * (generators read a default as "always present"): the API reads a missing `input` as `{}`, so it
 * is optional, and required only where `{}` can never pass the type's schema (that submit is
 * `422` either way). While no type is registered, the plain envelope.
 */
function createJobRequests(envelope: Json, registered: OpenApiOptions['jobTypes']): Json {
  const properties = envelope.properties as Record<string, Json>;
  const { default: _readAsMissing, ...anyInput } = properties.input ?? {};
  const plain = { ...envelope, properties: { ...properties, input: anyInput } };
  if (registered.length === 0) return { CreateJobRequest: plain };

  const variants = registered.map((job) => ({
    name: job.name,
    id: `CreateJobRequest.${componentKey(job.name)}`,
    schema: {
      ...plain,
      properties: {
        ...plain.properties,
        type: { type: 'string', const: job.name },
        input: ref('schemas', jobInputId(job.name)),
      },
      required: refusesEmptyObject(job.inputSchema) ? ['type', 'input'] : ['type'],
    },
  }));
  return {
    CreateJobRequest: {
      description:
        'The submit body: one variant per job type registered when this document was served, told apart by `type`.',
      oneOf: variants.map(({ id }) => ref('schemas', id)),
      discriminator: {
        propertyName: 'type',
        mapping: Object.fromEntries(
          variants.map(({ name, id }) => [name, `#/components/schemas/${id}`]),
        ),
      },
    },
    ...Object.fromEntries(variants.map(({ id, schema }) => [id, schema])),
  };
}

/** A request whose `input` defaults to `{}`, without the `default` (generators read it as "always there"). */
function withoutInputDefault(schema: Json): Json {
  const properties = schema.properties as Record<string, Json>;
  const { default: _readAsMissing, ...input } = properties.input ?? {};
  return { ...schema, properties: { ...properties, input } };
}

/** Whether `{}` (what the API reads a missing `input` as) can never match this input schema. */
function refusesEmptyObject(schema: Json): boolean {
  const { type, required, minProperties } = schema;
  if (Array.isArray(required) && required.length > 0) return true;
  if (typeof minProperties === 'number' && minProperties > 0) return true;
  if (typeof type === 'string') return type !== 'object';
  if (Array.isArray(type)) return !type.includes('object');
  return false;
}

/** The component that holds a job type's input schema. */
function jobInputId(name: string): string {
  return `JobInput.${componentKey(name)}`;
}

/**
 * Component names may hold `A-Z a-z 0-9 . _ -` only. A job type named with anything else (the
 * registry allows any name) gets the name with those characters replaced plus a hash of it, so
 * two such names never share a component.
 */
function componentKey(name: string): string {
  if (/^[A-Za-z0-9._-]+$/.test(name)) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.replace(/[^A-Za-z0-9._-]/g, '_')}-${hash}`;
}

/** Keywords whose values are data, not schemas: a `$ref` in them is not a reference. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'examples', 'example']);
/** Keywords whose values map names (which may be `default`, `$ref`, …) to schemas. */
const NAMED_SCHEMAS = new Set([
  'properties',
  'patternProperties',
  'dependentSchemas',
  '$defs',
  'definitions',
]);

const isObject = (node: unknown): node is Json =>
  node !== null && typeof node === 'object' && !Array.isArray(node);

/**
 * A registered input schema as components: `JobInput.<type>`, and one `JobInput.<type>.defs.<name>`
 * per part under its `$defs` (zod writes recursive and shared parts there). The schema was a
 * document of its own, so its `$ref`s point into it: they are pointed at those components (a
 * generator then names each part, instead of reading `$defs` as a property of the input). A
 * `$ref` to another document is dropped (that part reads as any value), so that no tool reading
 * this document is sent to fetch a URL a worker registered. A `default` becomes words in the
 * `description`: generators read a default as "always present", and the client may leave it out.
 */
function jobInputSchemas(job: OpenApiOptions['jobTypes'][number]): [string, Json][] {
  const id = jobInputId(job.name);
  const { $defs, definitions, ...root } = embeddable(job.inputSchema);
  const parts: Json = {
    ...(isObject(definitions) ? definitions : {}),
    ...(isObject($defs) ? $defs : {}),
  };
  const partId = (name: string) => `${id}.defs.${componentKey(name)}`;
  const target = (pointer: string): string | undefined => {
    const part = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(pointer)?.[1];
    const name = part === undefined ? undefined : unescapePointer(part);
    if (name !== undefined && Object.hasOwn(parts, name)) {
      return `#/components/schemas/${partId(name)}`;
    }
    if (pointer === '#' || pointer.startsWith('#/'))
      return `#/components/schemas/${id}${pointer.slice(1)}`;
    return undefined;
  };
  return [
    [id, relinked(root, target)],
    ...Object.entries(parts).map(([name, part]): [string, Json] => [
      partId(name),
      relinked(part, target),
    ]),
  ];
}

/** A JSON pointer segment of a URI fragment, as the name it stands for. */
function unescapePointer(segment: string): string {
  let decoded = segment;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    // Not percent-encoded after all: take it as written.
  }
  return decoded.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** `schema` with each `$ref` replaced by `target($ref)` (dropped when undefined), defaults worded. */
function relinked(schema: unknown, target: (ref: string) => string | undefined): Json {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isObject(node)) return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const to = target(value);
        if (to !== undefined) out[key] = to;
      } else if (key === 'default') {
        continue;
      } else if (DATA_KEYWORDS.has(key)) {
        out[key] = value;
      } else if (NAMED_SCHEMAS.has(key) && isObject(value)) {
        out[key] = Object.fromEntries(Object.entries(value).map(([n, v]) => [n, walk(v)]));
      } else {
        out[key] = walk(value);
      }
    }
    if ('default' in node) {
      const said = `Default: \`${JSON.stringify(node.default)}\`.`;
      const { description } = out;
      out.description =
        typeof description === 'string' && description.trim() !== ''
          ? `${description.replace(/[\s.]*$/, '.')} ${said}`
          : said;
    }
    return out;
  };
  return isObject(schema) ? (walk(schema) as Json) : {};
}

/** Drops `$schema` and `$id`: the document's dialect applies, and components are found by path. */
function embeddable(schema: object): Json {
  const { $schema: _dialect, $id: _id, ...rest } = schema as Json;
  return rest;
}
