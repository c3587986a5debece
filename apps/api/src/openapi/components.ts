import {
  callbackSchema,
  createJobRequestSchema,
  createScheduleRequestSchema,
  eventIdSchema,
  idempotencyKeySchema,
  inputResponseRequestSchema,
  problemSchema,
  replayRequestSchema,
  scheduleListSchema,
  scheduleSchema,
  stepPageSchema,
  taskHandleSchema,
  taskIdSchema,
  taskListSchema,
  taskResultSchema,
  taskStatusSchema,
  webhookPayloadSchema,
} from '@longrun/core';
import { healthSchema, readySchema } from '../routes/health.operations.js';
import { apiIndexSchema } from '../routes/index.operations.js';
import { jobTypeListSchema, jobTypeSchema } from '../routes/job-types.operations.js';
import {
  completeRequestSchema,
  failRequestSchema,
  heartbeatRequestSchema,
  heartbeatSchema,
  inputRequestSchema,
  leaseEndSchema,
  leaseListSchema,
  leaseRequestSchema,
  registerJobTypeRequestSchema,
} from '../routes/worker.operations.js';
import { batchSubmitRequestSchema, batchSubmitResultSchema } from '../routes/jobs.operations.js';
import { replayResultSchema } from '../routes/replay.operations.js';
import {
  completeWaitpointRequestSchema,
  completeWaitpointResultSchema,
} from '../routes/waitpoints.operations.js';
import {
  createJobRequests,
  jobInputSchemas,
  withoutInputDefault,
  type DocumentedJobType,
} from './job-inputs.js';
import { componentSchemas, jsonSchema, ref, type Json } from './json-schema.js';
import { problem } from './responses.js';

/** A 409 on a task also names the status it is in. */
const taskConflictSchema = problemSchema.extend({ taskStatus: taskStatusSchema.optional() });

/**
 * `components.schemas`: every body the operations name, generated from the zod schemas the API
 * validates with (or, for responses, answers in the shape of), plus each registered job type's
 * input schema and submit variant.
 */
export function schemaComponents(
  maxTtlMs: number,
  minEveryMs: number,
  registered: readonly DocumentedJobType[],
): Json {
  const requests = componentSchemas('input', {
    CreateJobRequest: createJobRequestSchema(maxTtlMs),
    CreateScheduleRequest: createScheduleRequestSchema(maxTtlMs, minEveryMs),
    Callback: callbackSchema,
    InputResponseRequest: inputResponseRequestSchema,
    BatchSubmitRequest: batchSubmitRequestSchema(maxTtlMs),
    ReplayRequest: replayRequestSchema,
    RegisterJobTypeRequest: registerJobTypeRequestSchema,
    LeaseRequest: leaseRequestSchema,
    HeartbeatRequest: heartbeatRequestSchema,
    CompleteLeaseRequest: completeRequestSchema,
    FailLeaseRequest: failRequestSchema,
    LeaseInputRequest: inputRequestSchema,
    CompleteWaitpointRequest: completeWaitpointRequestSchema,
  });
  return {
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
      CompleteWaitpointResult: completeWaitpointResultSchema,
      StepPage: stepPageSchema,
      WebhookPayload: webhookPayloadSchema,
      Health: healthSchema,
      ApiIndex: apiIndexSchema,
      Readiness: readySchema,
      JobTypeList: jobTypeListSchema,
      BatchSubmitResult: batchSubmitResultSchema,
      ReplayResult: replayResultSchema,
      RegisteredJobType: jobTypeSchema,
      LeaseList: leaseListSchema,
      Heartbeat: heartbeatSchema,
      LeaseEnd: leaseEndSchema,
    }),
    ...Object.fromEntries(registered.flatMap((job) => jobInputSchemas(job))),
  };
}

/** `components.parameters`: the path ids and the headers several operations read. */
export function parameterComponents(): Json {
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

/** `components.headers`: the response headers the operations send. */
export function headerComponents(): Json {
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

/** `components.responses`: the problem answers many operations share (`responses.ts` names them). */
export function problemResponseComponents(): Json {
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
