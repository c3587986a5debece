import { z } from 'zod';
import { PROBLEM_TYPES_PATH } from '@longrun/core';
import { OPEN, type Operation } from '../openapi/operation.js';
import { jsonResponse } from '../openapi/responses.js';

/** What `GET /` answers: where to go from the root (the OpenAPI document describes it too). */
export const apiIndexSchema = z.object({
  name: z.literal('longrun'),
  links: z
    .object({
      docs: z.literal('/docs').describe('The API reference, for people'),
      openapi: z.literal('/openapi.json').describe('The OpenAPI 3.1 document'),
      jobs: z.literal('/v1/jobs').describe('Submit and list tasks (bearer key)'),
      jobTypes: z.literal('/v1/job-types').describe('The job types workers serve (bearer key)'),
      schedules: z.literal('/v1/schedules').describe('Recurring tasks (bearer key)'),
      problems: z.literal(PROBLEM_TYPES_PATH).describe('What each problem type means'),
      health: z.literal('/healthz'),
    })
    .describe('Paths on this API, relative to its origin'),
});

export const index: Operation = {
  ...OPEN,
  method: 'get',
  path: '/',
  operationId: 'index',
  summary: 'Where to go from here: links to the docs, this document and the task routes',
  responses: { '200': jsonResponse('The index.', 'ApiIndex') },
};
