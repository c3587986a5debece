import { stepsQuerySchema } from '@longrun/core';
import type { Operation } from '../openapi/operation.js';
import { BAD_REQUEST, jsonResponse, ON_TASK, TASK_ID } from '../openapi/responses.js';

export const listJobSteps: Operation = {
  tags: ['tasks'],
  pathParameters: [TASK_ID],
  method: 'get',
  path: '/v1/jobs/{id}/steps',
  operationId: 'listJobSteps',
  summary: "Page a durable task's steps, oldest first",
  description: [
    "A durable task's handle carries its newest 50 steps and `stepCount`; this pages all of",
    'them (`ctx.step`, sleeps, child batches, waitpoints), oldest first. Pass `nextCursor` as',
    "`cursor` for the next page; a task without steps answers an empty page. Another tenant's",
    'task is `404`, as a missing one is.',
  ].join(' '),
  query: stepsQuerySchema,
  responses: {
    '200': jsonResponse('A page of steps, oldest first.', 'StepPage'),
    ...BAD_REQUEST,
    ...ON_TASK,
  },
};

export const STEP_OPERATIONS: readonly Operation[] = [listJobSteps];
