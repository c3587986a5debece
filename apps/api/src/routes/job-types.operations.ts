import { z } from 'zod';
import type { Operation } from '../openapi/operation.js';
import { COMMON, jsonResponse } from '../openapi/responses.js';

/** A registered job type's version, as `GET /v1/job-types` lists it. */
const jobTypeVersionSchema = z.object({
  version: z.string(),
  registeredAt: z.iso.datetime(),
  lastSeenAt: z.iso.datetime(),
  workers: z.number().int(),
});
/** A registered job type as `GET /v1/job-types` lists it (`jobTypeView` builds it). */
export const jobTypeSchema = z.object({
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
/** The body of `GET /v1/job-types`. */
export const jobTypeListSchema = z.object({ jobTypes: z.array(jobTypeSchema) });

export const listJobTypes: Operation = {
  method: 'get',
  path: '/v1/job-types',
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
    '200': jsonResponse('The registered job types, by name', 'JobTypeList'),
    ...COMMON,
  },
};
