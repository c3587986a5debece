import { ref, type Json } from './json-schema.js';

/**
 * The words route definitions describe their answers with: problem responses, JSON bodies, the
 * task handle, and the groups of problem answers most routes share (by status code, each a
 * component of `components.responses`).
 */

/** A problem+json response; `retry` adds `Retry-After`, `task` the `taskStatus` member. */
export function problem(description: string, { retry = false, task = false } = {}): Json {
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

/**
 * A JSON response whose body is the component `schema`.
 * @example jsonResponse('The schedule.', 'Schedule')
 */
export function jsonResponse(description: string, schema: string): Json {
  return { description, content: { 'application/json': { schema: ref('schemas', schema) } } };
}

/** A response of another media type, its body a string (HTML, Prometheus text). */
export function textResponse(description: string, media: string): Json {
  return { description, content: { [media]: { schema: { type: 'string' } } } };
}

/** What a fresh handle looks like; a test checks it against the generated `TaskHandle` schema. */
export const HANDLE_EXAMPLE = {
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

/** A response with the task handle as its body (`extra`: headers). */
export function handle(description: string, extra: Json = {}): Json {
  return {
    description,
    ...extra,
    content: {
      'application/json': { schema: ref('schemas', 'TaskHandle'), example: HANDLE_EXAMPLE },
    },
  };
}

/** `Retry-After` on a handle, sent while the task is not terminal. */
export const RETRY_WHILE_RUNNING = {
  headers: { 'Retry-After': ref('headers', 'RetryAfterWhileRunning') },
};

/** What any `/v1` route may answer: no key, over a limit, Redis not answering. */
export const COMMON = {
  '401': ref('responses', 'Unauthorized'),
  '429': ref('responses', 'TooManyRequests'),
  '503': ref('responses', 'Unavailable'),
};
/** A route on one task: also `404`. */
export const ON_TASK = { ...COMMON, '404': ref('responses', 'NotFound') };
/** A route on one schedule: also its `404`. */
export const ON_SCHEDULE = { ...COMMON, '404': ref('responses', 'ScheduleNotFound') };
/** A route that reads a body and stores something. */
export const BODY = {
  '413': ref('responses', 'ContentTooLarge'),
  '415': ref('responses', 'UnsupportedMediaType'),
  '507': ref('responses', 'StoreFull'),
};
export const BAD_REQUEST = { '400': ref('responses', 'BadRequest') };
export const UNPROCESSABLE = { '422': ref('responses', 'UnprocessableContent') };

/** The task id in the path. */
export const TASK_ID = ref('parameters', 'TaskId');
/** The schedule id in the path. */
export const SCHEDULE_ID = ref('parameters', 'ScheduleId');
