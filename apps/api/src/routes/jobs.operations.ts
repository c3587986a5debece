import { z } from 'zod';
import {
  createJobRequestSchema,
  eventsQuerySchema,
  getJobQuerySchema,
  idempotencyKeySchema,
  listJobsQuerySchema,
  MAX_RESULT_WAIT_SECONDS,
  problemSchema,
  resultQuerySchema,
  taskHandleSchema,
} from '@longrun/core';
import { ref } from '../openapi/json-schema.js';
import type { Operation } from '../openapi/operation.js';
import {
  BAD_REQUEST,
  BODY,
  COMMON,
  handle,
  jsonResponse,
  ON_TASK,
  problem,
  RETRY_WHILE_RUNNING,
  TASK_ID,
  UNPROCESSABLE,
} from '../openapi/responses.js';

/**
 * The `/v1/jobs` operations: what `routes/jobs.ts` mounts and the OpenAPI document describes.
 */

/** Where the task routes live. */
export const JOBS_PATH = '/v1/jobs';
/**
 * The collection's own route. With the trailing slash it matches `/v1/jobs` and `/v1/jobs/`, and
 * the metrics' `route` label stays `/v1/jobs/`, as it was when these routes were a mounted router.
 */
const COLLECTION = `${JOBS_PATH}/`;

/** The body of `POST /v1/jobs/batch`, item by item as the single submit's. */
export const batchSubmitRequestSchema = (maxTtlMs: number) =>
  z.strictObject({
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
  });

/** The answer of `POST /v1/jobs/batch`. */
export const batchSubmitResultSchema = z.object({
  results: z
    .array(
      z.object({
        status: z.number().int().describe('What `POST /v1/jobs` would have answered'),
        replayed: z.literal(true).optional().describe('The earlier task of this idempotencyKey'),
        task: taskHandleSchema.optional().describe('The handle, when status is 202'),
        problem: problemSchema.optional().describe('Why this item created nothing'),
      }),
    )
    .describe("One entry per submitted item, in the items' order"),
});

const tasks = { tags: ['tasks'] };
const onTask = { ...tasks, pathParameters: [TASK_ID] };

export const submitJobs: Operation = {
  ...tasks,
  method: 'post',
  path: `${JOBS_PATH}/batch`,
  operationId: 'submitJobs',
  summary: 'Submit up to 100 tasks in one request',
  description: [
    'Each item is validated and created on its own, exactly as by `POST /v1/jobs` (an item',
    "may carry its own `idempotencyKey`); one item's refusal does not stop the others. The",
    "answer is `207` with each item's status and its handle or problem, in order. A bad",
    'envelope (no `tasks`, none, more than 100) is one `400` and creates nothing. The whole',
    'request counts once against the rate limit.',
  ].join(' '),
  body: {
    schema: 'BatchSubmitRequest',
    example: {
      tasks: [
        { type: 'sleep', input: { ms: 2000 } },
        { type: 'echo', input: { n: 1 }, idempotencyKey: 'import-2026-12-02-row-1' },
      ],
    },
  },
  responses: {
    '207': jsonResponse("Each item's outcome, in order", 'BatchSubmitResult'),
    ...BAD_REQUEST,
    ...COMMON,
    ...BODY,
  },
};

export const submitJob: Operation = {
  ...tasks,
  method: 'post',
  path: JOBS_PATH,
  route: COLLECTION,
  operationId: 'submitJob',
  summary: 'Submit a task',
  description: ({ jobTypes }) =>
    [
      `Validates the envelope (unknown fields such as \`ttl\` are \`400\`), then \`input\``,
      `against the job type's registered schema (\`422\`; see the \`JobInput.*\` schemas and`,
      `\`GET /v1/job-types\`). Job types registered when this document was served: ${jobTypes}.`,
      'A type no worker has registered is `400`.',
      'Answers `202` only once Redis stored the task. With `callback`, every status change is',
      'POSTed to `callback.url` (see the `task.updated` webhook).',
    ].join(' '),
  parameters: [ref('parameters', 'IdempotencyKey')],
  body: {
    schema: 'CreateJobRequest',
    example: { type: 'sleep', input: { ms: 20000 }, ttlMs: 3600000 },
  },
  responses: {
    '202': handle('Stored and queued (or, with `Idempotent-Replayed`, the earlier task).', {
      headers: {
        Location: ref('headers', 'Location'),
        'Retry-After': ref('headers', 'RetryAfter'),
        'Idempotent-Replayed': ref('headers', 'IdempotentReplayed'),
      },
    }),
    ...BAD_REQUEST,
    '409': problem('The task for this `Idempotency-Key` is being created or removed; retry.', {
      retry: true,
    }),
    ...UNPROCESSABLE,
    ...COMMON,
    ...BODY,
  },
  callbacks: {
    taskUpdated: {
      '{$request.body#/callback/url}': { $ref: '#/components/pathItems/TaskUpdatedDelivery' },
    },
  },
};

export const listJobs: Operation = {
  ...tasks,
  method: 'get',
  path: JOBS_PATH,
  route: COLLECTION,
  operationId: 'listJobs',
  summary: "List the caller's tasks, newest first",
  description:
    "Each item is a summary: the task handle without `result` (the task's own `GET` has it), so a page costs the same whatever the tasks weigh. `view=full` includes each result.",
  query: listJobsQuerySchema,
  responses: {
    '200': jsonResponse(
      'A page of tasks; pass `nextCursor` as `cursor` for the next one.',
      'TaskList',
    ),
    ...BAD_REQUEST,
    ...COMMON,
  },
};

export const getJob: Operation = {
  ...onTask,
  method: 'get',
  path: `${JOBS_PATH}/{id}`,
  operationId: 'getJob',
  summary: 'Get the task handle',
  description:
    '`result`, `error` or `inputRequest` appear as the status calls for; `include=input` adds the input the task was submitted with (the task console shows it).',
  query: getJobQuerySchema,
  responses: { '200': handle('The handle.', RETRY_WHILE_RUNNING), ...BAD_REQUEST, ...ON_TASK },
};

export const deleteJob: Operation = {
  ...onTask,
  method: 'delete',
  path: `${JOBS_PATH}/{id}`,
  operationId: 'deleteJob',
  summary: 'Forget a finished task now',
  responses: {
    '204': { description: 'Forgotten.' },
    '409': problem('The task is not terminal; cancel it first.', { task: true }),
    ...ON_TASK,
  },
};

export const getJobResult: Operation = {
  ...onTask,
  method: 'get',
  path: `${JOBS_PATH}/{id}/result`,
  operationId: 'getJobResult',
  summary: 'Get the outcome of a finished task (optionally long-polling)',
  description: `With \`wait\` (0-${MAX_RESULT_WAIT_SECONDS} s) the request is held until the task is terminal or the wait ends, then answered exactly as without it.`,
  query: resultQuerySchema,
  responses: {
    '200': jsonResponse(
      'The task is terminal: its result, or the error that ended it.',
      'TaskResult',
    ),
    ...BAD_REQUEST,
    '409': problem('Not finished yet; `taskStatus` says where it is.', {
      retry: true,
      task: true,
    }),
    ...ON_TASK,
  },
};

export const cancelJob: Operation = {
  ...onTask,
  method: 'post',
  path: `${JOBS_PATH}/{id}/cancel`,
  operationId: 'cancelJob',
  summary: 'Cancel a task',
  description:
    'The task is `cancelled` at once and never becomes `completed`; a running handler is aborted wherever it runs. No body is needed (a JSON body is accepted and ignored).',
  responses: {
    '200': handle('The cancelled task.'),
    ...BAD_REQUEST,
    '409': problem('The task is already terminal.', { task: true }),
    ...ON_TASK,
    ...BODY,
  },
};

export const answerJobInput: Operation = {
  ...onTask,
  method: 'post',
  path: `${JOBS_PATH}/{id}/input`,
  operationId: 'answerJobInput',
  summary: 'Answer an input_required task',
  description: "`input` is validated against the handle's `inputRequest.schema`.",
  body: { schema: 'InputResponseRequest', example: { input: { approved: true, comment: 'go' } } },
  responses: {
    '200': handle('Answer accepted; the task is `working` again.', RETRY_WHILE_RUNNING),
    ...BAD_REQUEST,
    '409': problem(
      'The task is not waiting for input (`not-awaiting-input`), or was answered meanwhile and now asks another question (`question-changed`).',
      { task: true },
    ),
    ...UNPROCESSABLE,
    ...ON_TASK,
    ...BODY,
  },
};

export const streamJobEvents: Operation = {
  ...onTask,
  tags: ['live updates'],
  method: 'get',
  path: `${JOBS_PATH}/{id}/events`,
  operationId: 'streamJobEvents',
  summary: 'Stream task events (Server-Sent Events)',
  description: [
    'Starts with a `retry:` line and the current handle, then one event per status or',
    'progress change; closes after the terminal event. Each `data:` line is a `TaskHandle`;',
    "an event's handle carries the durable step it recorded or changed (`step`), not `steps`.",
    'Comment lines (`: ping`) every 15 s keep proxies from closing the stream. Resume with',
    '`Last-Event-ID` (or `?lastEventId=`): nothing after that id is skipped.',
  ].join(' '),
  parameters: [ref('parameters', 'LastEventId')],
  query: eventsQuerySchema,
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
    ...BAD_REQUEST,
    ...ON_TASK,
  },
};

/** In the document's order. */
export const JOB_OPERATIONS: readonly Operation[] = [
  submitJobs,
  submitJob,
  listJobs,
  getJob,
  deleteJob,
  getJobResult,
  cancelJob,
  answerJobInput,
  streamJobEvents,
];
