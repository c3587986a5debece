import { createRequire } from 'node:module';
import { DEFAULT_MIN_SCHEDULE_EVERY_MS } from '@longrun/core';
import {
  headerComponents,
  parameterComponents,
  problemResponseComponents,
  schemaComponents,
} from './openapi/components.js';
import type { DocumentedJobType } from './openapi/job-inputs.js';
import type { Json } from './openapi/json-schema.js';
import { pathItems } from './openapi/operation.js';
import { webhookDelivery } from './openapi/webhook.js';
import { OPERATIONS } from './routes/operations.js';

export interface OpenApiOptions {
  /** Upper bound of `ttlMs`, as the API enforces it. */
  maxTtlMs: number;
  /** Lower bound of a schedule's `everyMs` (default 1000, `LONGRUN_SCHEDULE_MIN_EVERY_MS`). */
  minEveryMs?: number | undefined;
  /** The job types registered when the document is built; each one's input schema is published. */
  jobTypes: readonly DocumentedJobType[];
}

const version = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/**
 * The OpenAPI 3.1 document of the API, assembled from the operations the routes mount
 * (`routes/*.operations.ts`, listed in `routes/operations.ts`), so every documented path is a
 * served one and the other way round. Every schema in it is generated with `z.toJSONSchema`
 * (draft 2020-12, the dialect of OpenAPI 3.1) from the zod schemas the routes validate with, so
 * the document cannot drift from what the API accepts either.
 * @example res.json(buildOpenApiDocument({ maxTtlMs: 7 * 86_400_000, jobTypes }))
 */
export function buildOpenApiDocument({
  maxTtlMs,
  minEveryMs = DEFAULT_MIN_SCHEDULE_EVERY_MS,
  jobTypes: registered,
}: OpenApiOptions): Json {
  const jobTypes = registered.length
    ? registered.map(({ name }) => `\`${name}\``).join(', ')
    : 'none registered yet';

  return {
    openapi: '3.1.0',
    info: {
      title: 'longrun',
      version,
      summary: 'Redis-backed job queue with a task-handle HTTP facade',
      description: [
        'Submit work that outlives a request, get a **task handle** at once, then poll it, wait on it,',
        'stream its events, or be called back. Every `/v1` route needs `Authorization: Bearer <key>`;',
        "another tenant's task answers `404` exactly like a missing one. Errors are RFC 9457",
        '`application/problem+json` with an `errors: [{path, message}]` list naming the field; a',
        "problem's `type` (`/problems/<code>`, relative to the response's URL) is a page of this",
        'API saying what it means and what to do (`GET /problems` lists them all).',
        '',
        'Statuses: `working`, `input_required`, `completed`, `cancelled`, `failed`. Honour',
        '`Retry-After` (seconds) / `pollIntervalMs` when polling.',
      ].join('\n'),
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'tasks', description: 'Submit, inspect, answer, cancel and collect tasks' },
      {
        name: 'live updates',
        description: 'Server-Sent Events and webhooks (to long-poll, pass `wait` to the result)',
      },
      {
        name: 'schedules',
        description: 'Recurring tasks: each tick of a cron or period submits one task',
      },
      {
        name: 'workers',
        description:
          'The HTTP worker protocol: workers in any language register job types, lease jobs, heartbeat and finish them with a worker key (`LONGRUN_WORKER_KEYS`)',
      },
      { name: 'operations', description: 'Health, readiness, metrics and this document' },
    ],
    paths: pathItems(OPERATIONS, { jobTypes, minEveryMs }),
    // Inline, not a $ref: Swagger UI does not render a webhook whose path item is a reference.
    webhooks: { 'task.updated': webhookDelivery() },
    components: {
      schemas: schemaComponents(maxTtlMs, minEveryMs, registered),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key; it names the tenant that owns the tasks it creates.',
        },
      },
      parameters: parameterComponents(),
      headers: headerComponents(),
      responses: problemResponseComponents(),
      pathItems: { TaskUpdatedDelivery: webhookDelivery() },
    },
  };
}
