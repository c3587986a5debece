import { ref } from '../openapi/json-schema.js';
import type { Operation } from '../openapi/operation.js';
import {
  BAD_REQUEST,
  BODY,
  COMMON,
  jsonResponse,
  ON_SCHEDULE,
  problem,
  SCHEDULE_ID,
  UNPROCESSABLE,
} from '../openapi/responses.js';

/**
 * The `/v1/schedules` operations: what `routes/schedules.ts` mounts and the OpenAPI document
 * describes.
 */

/** Where the schedule routes live. */
export const SCHEDULES_PATH = '/v1/schedules';
/** The collection's route: matches `/v1/schedules` and `/v1/schedules/` (as `/v1/jobs/` does). */
const COLLECTION = `${SCHEDULES_PATH}/`;

const schedules = { tags: ['schedules'] };
const onSchedule = { ...schedules, pathParameters: [SCHEDULE_ID] };

export const createSchedule: Operation = {
  ...schedules,
  method: 'post',
  path: SCHEDULES_PATH,
  route: COLLECTION,
  operationId: 'createSchedule',
  summary: 'Create a schedule (a recurring task)',
  description: ({ minEveryMs }) =>
    [
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
  body: {
    schema: 'CreateScheduleRequest',
    example: { type: 'echo', input: { report: 'daily' }, cron: '0 6 * * *', tz: 'UTC' },
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
    ...BAD_REQUEST,
    '409': problem(
      'The tenant has as many schedules as allowed (`LONGRUN_MAX_SCHEDULES`), or the schedule for this `Idempotency-Key` is being removed (retry).',
    ),
    ...UNPROCESSABLE,
    ...COMMON,
    ...BODY,
  },
};

export const listSchedules: Operation = {
  ...schedules,
  method: 'get',
  path: SCHEDULES_PATH,
  route: COLLECTION,
  operationId: 'listSchedules',
  summary: "List the caller's schedules, newest first",
  responses: {
    '200': jsonResponse('Every schedule of the tenant.', 'ScheduleList'),
    ...COMMON,
  },
};

export const getSchedule: Operation = {
  ...onSchedule,
  method: 'get',
  path: `${SCHEDULES_PATH}/{id}`,
  operationId: 'getSchedule',
  summary: 'Get a schedule, with when it runs next and what its last tick did',
  responses: { '200': jsonResponse('The schedule.', 'Schedule'), ...ON_SCHEDULE },
};

export const deleteSchedule: Operation = {
  ...onSchedule,
  method: 'delete',
  path: `${SCHEDULES_PATH}/{id}`,
  operationId: 'deleteSchedule',
  summary: 'Delete a schedule: no tick after this makes a task',
  description:
    "The schedule's tasks stay (they expire with their `ttlMs`); a tick already under way makes its task only if that happens before the delete answers: none does after.",
  responses: { '204': { description: 'Deleted.' }, ...ON_SCHEDULE },
};

/** In the document's order. */
export const SCHEDULE_OPERATIONS: readonly Operation[] = [
  createSchedule,
  listSchedules,
  getSchedule,
  deleteSchedule,
];
