import { z } from 'zod';
import { ref } from '../openapi/json-schema.js';
import type { Operation } from '../openapi/operation.js';
import { BAD_REQUEST, BODY, COMMON, jsonResponse, problem } from '../openapi/responses.js';

/**
 * The `/v1/worker/*` operations: the HTTP worker protocol (decision 62). Workers in any language
 * register their job types, lease jobs (long-poll), heartbeat and finish them with a worker key
 * (`LONGRUN_WORKER_KEYS`), never touching Redis. What `routes/worker.ts` mounts.
 */

export const WORKER_PATH = '/v1/worker';

/** A job type's name as a path segment (a queue name may not hold `:`, braces or spaces). */
export const jobTypeNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,100}$/, '1-100 letters, digits, _ . -');

/** The body of `PUT /v1/worker/job-types/{name}`. */
export const registerJobTypeRequestSchema = z
  .object({
    inputSchema: z
      .record(z.string(), z.unknown())
      .describe("The input's JSON Schema (draft 2020-12): submits are validated with it"),
    queue: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/)
      .optional()
      .describe('A queue shared with other types (`tasks-<queue>`); default: its own'),
    attempts: z.number().int().min(1).max(100).optional().describe('Runs before it fails (1)'),
    backoffMs: z.number().int().min(0).max(86_400_000).optional(),
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(7 * 86_400_000)
      .optional()
      .describe('How long one run may take (checked at each heartbeat and finish)'),
    concurrency: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .optional()
      .describe('Runs under way at once across every worker (BullMQ global concurrency)'),
    rateLimit: z
      .object({
        max: z.number().int().min(1).max(1_000_000),
        durationMs: z.number().int().min(1).max(86_400_000),
      })
      .strict()
      .optional()
      .describe('At most `max` runs start per `durationMs`, across every worker'),
  })
  .strict();

/** One completion sent with a lease call (decision 68): as `…/complete` would take it. */
export const leaseCompletionSchema = z
  .object({
    leaseId: z.string().min(1).max(1024).describe('A lease of this worker, finished'),
    result: z.unknown().describe("The task's result (any JSON)"),
  })
  .strict()
  .refine((body) => 'result' in body, { message: 'result is required', path: ['result'] });

/** The body of `POST /v1/worker/leases`. */
export const leaseRequestSchema = z
  .object({
    completions: z
      .array(leaseCompletionSchema)
      .max(100)
      .optional()
      .describe(
        'Leases to complete first, each as `POST …/{leaseId}/complete` would (decision 68): one call finishes the runs done and leases the next. The body stays under 1 MiB: send a large result through `…/complete`.',
      ),
    types: z.array(jobTypeNameSchema).min(1).max(50).describe('The job types this worker runs'),
    max: z.number().int().min(1).max(100).default(1).describe('Most leases in one answer'),
    waitMs: z
      .number()
      .int()
      .min(0)
      .max(30_000)
      .default(0)
      .describe('With no job waiting, how long to wait for one (a long poll)'),
  })
  .strict();

const leaseSchema = z.object({
  leaseId: z.string().describe('Names the lease in its heartbeat and finish calls'),
  taskId: z.string(),
  type: z.string(),
  input: z.record(z.string(), z.unknown()),
  attempt: z.number().int().describe('1 on the first run; +1 after a failure or an expired lease'),
  answer: z.unknown().optional().describe('The answer to the input this task asked for last'),
  leaseMs: z.number().int().describe('Heartbeat within this long, or the lease expires'),
  traceparent: z.string().optional(),
});
/** What became of one of a lease call's `completions`: its task, or the problem `…/complete` answers. */
const leaseCompletedSchema = z.object({
  leaseId: z.string(),
  taskId: z.string().optional().describe('Completed: the task'),
  status: z.literal('completed').optional(),
  problem: z
    .object({
      status: z.number().int(),
      title: z.string(),
      code: z.string(),
      detail: z.string().optional(),
      taskStatus: z.string().optional(),
    })
    .passthrough()
    .optional()
    .describe('Not completed: what `…/complete` would have answered (404, 409 or 422)'),
});
/** The answer of `POST /v1/worker/leases`. */
export const leaseListSchema = z.object({
  leases: z.array(leaseSchema),
  completions: z
    .array(leaseCompletedSchema)
    .optional()
    .describe("Present when the request had `completions`: each one's outcome, in order"),
});

/** The body of `POST /v1/worker/leases/{leaseId}/heartbeat`. */
export const heartbeatRequestSchema = z
  .object({
    progress: z.number().min(0).max(100).optional(),
    message: z.string().max(1000).optional().describe("Shown as the task's statusMessage"),
  })
  .strict();
export const heartbeatSchema = z.object({
  cancelled: z.boolean().describe('The task ended meanwhile (cancelled): stop the run'),
  leaseMs: z.number().int(),
});

export const completeRequestSchema = z
  .object({ result: z.unknown().describe("The task's result (any JSON)") })
  .strict()
  .refine((body) => 'result' in body, { message: 'result is required', path: ['result'] });
export const failRequestSchema = z
  .object({
    error: z
      .object({ code: z.string().min(1).max(100), message: z.string().min(1).max(10_000) })
      .strict(),
    retry: z.boolean().optional().describe('`false`: no retry whatever attempts are left'),
  })
  .strict();
export const inputRequestSchema = z
  .object({
    message: z.string().min(1).max(1000),
    schema: z.record(z.string(), z.unknown()).describe("The answer's JSON Schema"),
  })
  .strict();
export const leaseEndSchema = z.object({
  taskId: z.string(),
  status: z
    .enum(['working', 'input_required', 'completed', 'failed'])
    .describe("The task's status after the call (`working`: a retry follows)"),
});

const worker = { tags: ['workers'] };
const LEASE_ID = {
  name: 'leaseId',
  in: 'path',
  required: true,
  description: 'A lease id from `POST /v1/worker/leases`',
  schema: { type: 'string' },
};
const onLease = { ...worker, pathParameters: [LEASE_ID] };
const TYPE_NAME = {
  name: 'name',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,100}$' },
};
const AUTH = {
  ...COMMON,
  '403': problem('A tenant key: the worker routes take a worker key (`LONGRUN_WORKER_KEYS`).'),
};
const ON_LEASE = {
  ...AUTH,
  ...BAD_REQUEST,
  ...BODY,
  '404': problem(
    'Not a lease this worker key was given (made up, changed, or another key’s), or its task is gone.',
  ),
  '409': problem(
    'The lease expired (`lease-expired`: the job runs again elsewhere), or the task ended meanwhile (`lease-ended`: cancelled, or past its timeout).',
    { task: true },
  ),
};

export const registerWorkerJobType: Operation = {
  ...worker,
  method: 'put',
  path: `${WORKER_PATH}/job-types/{name}`,
  operationId: 'registerWorkerJobType',
  summary: 'Register a job type an HTTP worker runs',
  description:
    'The type appears in `GET /v1/job-types` like an SDK worker’s and stays registered: submits are accepted while no worker runs. Registering the same settings again is a no-op; other settings make a new version. The first worker key to register a type owns it (issue 41): only it re-registers, leases and removes the type; a type an SDK worker serves is owned by SDK workers.',
  pathParameters: [TYPE_NAME],
  body: {
    schema: 'RegisterJobTypeRequest',
    example: {
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
  },
  responses: {
    '200': {
      description: 'Registered; the type as `GET /v1/job-types` lists it.',
      content: { 'application/json': { schema: ref('schemas', 'RegisteredJobType') } },
    },
    ...BAD_REQUEST,
    ...AUTH,
    ...BODY,
    '403': problem(
      'A tenant key (`wrong-key`), or a type outside the list of the worker key’s `LONGRUN_WORKER_KEYS` entry (`job-type-not-allowed`).',
    ),
    '409': problem(
      'Another worker key or SDK workers own the type, or a type of theirs runs on the queue it names (`job-type-owned`); or this key owns `LONGRUN_WORKER_MAX_TYPES` types already (`too-many-job-types`).',
    ),
    '413': problem(
      'The body is over 1 MiB (`entity-too-large`), or the input schema over 64 KiB of JSON (`schema-too-large`).',
    ),
  },
};

export const removeWorkerJobType: Operation = {
  ...worker,
  method: 'delete',
  path: `${WORKER_PATH}/job-types/{name}`,
  operationId: 'removeWorkerJobType',
  summary: 'Remove a job type this worker key owns',
  description:
    'Forgets the type (every version) and its owner, so it may be registered again by any key; submits of it are refused from then on. Only a type no task is waiting for (or running) is removed.',
  pathParameters: [TYPE_NAME],
  responses: {
    '204': { description: 'Removed.' },
    ...AUTH,
    '403': problem(
      'A tenant key (`wrong-key`), or a type this worker key does not own, or that is not registered (`job-type-owned`).',
    ),
    '409': problem('Tasks of the type are waiting or running (`job-type-in-use`).'),
  },
};

export const leaseJobs: Operation = {
  ...worker,
  method: 'post',
  path: `${WORKER_PATH}/leases`,
  operationId: 'leaseJobs',
  summary: 'Lease jobs to run (long-poll)',
  description:
    'Up to `max` jobs of `types`, each one run of one job: fair share, priorities, rate limits, delays and timeouts apply as for SDK workers. With none waiting, waits up to `waitMs` for one, then answers an empty list. Heartbeat each lease within `leaseMs`, or its job runs again elsewhere (`attempt` + 1). Optional `completions` are done first, each as `…/complete` would, and answered in `completions`: a worker finishes the runs it has done and leases the next in one call.',
  body: { schema: 'LeaseRequest', example: { types: ['py-wordcount'], max: 1, waitMs: 20000 } },
  responses: {
    '200': jsonResponse('The leases (maybe none).', 'LeaseList'),
    ...BAD_REQUEST,
    ...AUTH,
    '403': problem(
      'A tenant key (`wrong-key`), or a type another worker key or SDK workers own (`job-type-owned`).',
    ),
    ...BODY,
    '503': problem(
      'Redis did not answer in time (`store-unavailable`), or this API process is stopping and took nothing (`stopping`, with `Connection: close`): retry after `Retry-After`.',
      { retry: true },
    ),
  },
};

export const heartbeatLease: Operation = {
  ...onLease,
  method: 'post',
  path: `${WORKER_PATH}/leases/{leaseId}/heartbeat`,
  operationId: 'heartbeatLease',
  summary: "Renew a lease, and report the run's progress",
  body: { schema: 'HeartbeatRequest', example: { progress: 50, message: 'half way' } },
  responses: {
    '200': jsonResponse('Renewed for `leaseMs`; `cancelled`: stop the run.', 'Heartbeat'),
    ...ON_LEASE,
  },
};

const finish = (
  name: string,
  operationId: string,
  summary: string,
  schema: string,
  example: unknown,
  extra: Record<string, unknown> = {},
): Operation => ({
  ...onLease,
  method: 'post',
  path: `${WORKER_PATH}/leases/{leaseId}/${name}`,
  operationId,
  summary,
  body: { schema, example },
  responses: {
    '200': jsonResponse("The run is over; the task's status now.", 'LeaseEnd'),
    ...ON_LEASE,
    ...extra,
  },
});

export const completeLease = finish(
  'complete',
  'completeLease',
  'Complete the task with its result',
  'CompleteLeaseRequest',
  { result: { words: 3 } },
  {
    '422': problem(
      'The result is over `LONGRUN_MAX_RESULT_BYTES` (`result-too-large`): the task has failed, as on SDK workers.',
    ),
  },
);
export const failLease = finish(
  'fail',
  'failLease',
  'Fail the run (retried while attempts are left, unless `retry` is false)',
  'FailLeaseRequest',
  { error: { code: 'bad-text', message: 'cannot count that' }, retry: false },
);
export const askInput = finish(
  'input',
  'askLeaseInput',
  'Ask for input: the task becomes `input_required`; the answer comes with its next lease',
  'LeaseInputRequest',
  { message: 'Which text?', schema: { type: 'object', properties: { text: { type: 'string' } } } },
);

/** In the document's order. */
export const WORKER_OPERATIONS: readonly Operation[] = [
  registerWorkerJobType,
  removeWorkerJobType,
  leaseJobs,
  heartbeatLease,
  completeLease,
  failLease,
  askInput,
];
