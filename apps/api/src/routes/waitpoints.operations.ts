import { z } from 'zod';
import type { Operation } from '../openapi/operation.js';
import { BAD_REQUEST, BODY, COMMON, jsonResponse, problem } from '../openapi/responses.js';

/** The body of `POST /v1/waitpoints/{id}`. */
export const completeWaitpointRequestSchema = z.object({
  data: z.unknown().describe('What the waiting handler receives from `ctx.waitFor`'),
});

/** The answer of `POST /v1/waitpoints/{id}`. */
export const completeWaitpointResultSchema = z.object({
  waitpointId: z.string(),
  taskId: z.string().describe('The task that waits on it'),
  status: z.literal('completed'),
});

export const completeWaitpoint: Operation = {
  tags: ['tasks'],
  method: 'post',
  path: '/v1/waitpoints/{id}',
  operationId: 'completeWaitpoint',
  summary: 'Complete a waitpoint of a durable task',
  description:
    "A durable handler's `ctx.createWaitpoint()` hands out an id; posting `{data}` here with the tenant's key completes it once, and the task waiting on it (`ctx.waitFor`) resumes with `data`. The data counts against the tenant's storage budget: `429` `storage-budget` (with `Retry-After`) when it does not fit, as for a submit.",
  pathParameters: [
    {
      name: 'id',
      in: 'path',
      required: true,
      description: 'The waitpoint id (`<taskId>.<n>`)',
      schema: { type: 'string' },
    },
  ],
  body: { schema: 'CompleteWaitpointRequest', example: { data: { paid: true } } },
  responses: {
    '200': jsonResponse('Completed; the task resumes.', 'CompleteWaitpointResult'),
    ...BAD_REQUEST,
    '404': problem("No such waitpoint for your key (another tenant's looks the same)."),
    '409': problem(
      'The waitpoint was completed before (`waitpoint-completed`), timed out (`waitpoint-timed-out`), or its task has finished (`terminal`).',
    ),
    ...COMMON,
    ...BODY,
  },
};

export const WAITPOINT_OPERATIONS: readonly Operation[] = [completeWaitpoint];
