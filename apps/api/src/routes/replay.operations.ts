import { z } from 'zod';
import { problemSchema, taskHandleSchema } from '@longrun/core';
import { ref } from '../openapi/json-schema.js';
import type { Operation } from '../openapi/operation.js';
import {
  BAD_REQUEST,
  BODY,
  COMMON,
  handle,
  jsonResponse,
  ON_TASK,
  TASK_ID,
  UNPROCESSABLE,
} from '../openapi/responses.js';
import { JOBS_PATH } from './jobs.operations.js';

/**
 * The replay operations (`POST /v1/jobs/{id}/replay`, `POST /v1/jobs/replay`): what
 * `routes/replay.ts` mounts and the OpenAPI document describes.
 */

/** The answer of `POST /v1/jobs/replay`. */
export const replayResultSchema = z.object({
  results: z
    .array(
      z.object({
        taskId: z.string().describe('The task replayed'),
        status: z.number().int().describe('What `POST /v1/jobs/{id}/replay` would have answered'),
        task: taskHandleSchema.optional().describe('The new task, when status is 202'),
        problem: problemSchema.optional().describe('Why no new task was made for this one'),
      }),
    )
    .describe('One entry per task that matched, newest first'),
});

const WHAT_IS_COPIED =
  'The new task has the same type, input, ttl, timeout and tags, and names the task it replays (`replayOf`); the input is checked against the type as it is registered now. Not copied: the callback, the delay, the priority, the idempotency key.';

export const replayJob: Operation = {
  tags: ['tasks'],
  pathParameters: [TASK_ID],
  method: 'post',
  path: `${JOBS_PATH}/{id}/replay`,
  operationId: 'replayJob',
  summary: 'Submit a task again (a new task with the same type and input)',
  description: `${WHAT_IS_COPIED} Answered as a submit is (\`202\`, \`Location\`). No body is needed (a JSON body is accepted and ignored). Another tenant's task is \`404\`.`,
  responses: {
    '202': handle('The new task, stored and queued.', {
      headers: {
        Location: ref('headers', 'Location'),
        'Retry-After': ref('headers', 'RetryAfter'),
      },
    }),
    ...BAD_REQUEST,
    ...UNPROCESSABLE,
    ...ON_TASK,
    ...BODY,
  },
};

export const replayJobs: Operation = {
  tags: ['tasks'],
  method: 'post',
  path: `${JOBS_PATH}/replay`,
  operationId: 'replayJobs',
  summary: 'Replay up to 100 tasks matching a filter',
  description: [
    'Finds the newest tasks matching `filter` (`status`, `type`, `tag`, created at or after',
    '`since`), at most `limit` (1-100) of them, among the newest 10 000 of the tenant (a tag',
    "filter reads only the tag's tasks), and replays each on its own, as",
    '`POST /v1/jobs/{id}/replay` would. The answer is `207` with one entry per task matched:',
    `its id, and the new task or the problem. ${WHAT_IS_COPIED}`,
  ].join(' '),
  body: {
    schema: 'ReplayRequest',
    example: {
      filter: { status: 'failed', type: 'resize', since: '2026-12-03T00:00:00Z' },
      limit: 100,
    },
  },
  responses: {
    '207': jsonResponse("Each matched task's replay, newest first", 'ReplayResult'),
    ...BAD_REQUEST,
    ...COMMON,
    ...BODY,
  },
};

/** In the document's order. */
export const REPLAY_OPERATIONS: readonly Operation[] = [replayJobs, replayJob];
