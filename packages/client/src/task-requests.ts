import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { taskHandleSchema, taskListSchema, taskResultSchema } from '@longrun/core';
import { followEvents } from './events.js';
import { jobTypeListSchema } from './job-types.js';
import type { LongrunClient } from './longrun-client.js';
import { batchResultSchema, type SubmitOptions } from './options.js';
import type { Transport } from './transport.js';
import type { JobTypeMap } from './types.js';
import { waitForTask } from './wait.js';

/** `POST /v1/waitpoints/{id}`'s answer. */
const waitpointResultSchema = z.object({
  waitpointId: z.string(),
  taskId: z.string(),
  status: z.literal('completed'),
});

/** The client's task methods (and the job types submits name), over one transport. */
export type TaskMethods<C extends JobTypeMap> = Omit<
  LongrunClient<C>,
  'createSchedule' | 'listSchedules' | 'getSchedule' | 'deleteSchedule'
>;

/**
 * The task methods of {@link LongrunClient}: each one request (or a loop of them) through the
 * transport, the answer parsed with core's schema.
 * @example const methods = taskMethods(new Transport(options))
 */
export function taskMethods<C extends JobTypeMap>(transport: Transport): TaskMethods<C> {
  const task = (id: string, rest = '') => `v1/jobs/${encodeURIComponent(id)}${rest}`;

  return {
    async submit(type, input, opts = {}) {
      const reply = await transport.request({
        method: 'POST',
        path: 'v1/jobs',
        body: submitBody(type, input, opts),
        headers: { 'idempotency-key': opts.idempotencyKey ?? randomUUID() },
        signal: opts.signal,
        retry: true, // safe: every attempt carries the same Idempotency-Key
        schema: taskHandleSchema,
      });
      return reply.data;
    },

    async submitBatch(items, opts = {}) {
      const tasks = items.map(({ type, input, ...options }) => ({
        ...submitBody(type, input, options),
        idempotencyKey: options.idempotencyKey ?? randomUUID(),
      }));
      const reply = await transport.request({
        method: 'POST',
        path: 'v1/jobs/batch',
        body: { tasks },
        signal: opts.signal,
        retry: true, // safe: every item carries its own idempotency key
        schema: batchResultSchema,
      });
      return reply.data.results;
    },

    async get(id, opts = {}) {
      const reply = await transport.request({
        method: 'GET',
        path: task(id),
        signal: opts.signal,
        retry: true,
        schema: taskHandleSchema,
      });
      return reply.data;
    },

    wait(id, opts) {
      return waitForTask(transport, id, opts);
    },

    async result(id, opts = {}) {
      const reply = await transport.request({
        method: 'GET',
        path: task(id, '/result'),
        query: { wait: opts.wait },
        signal: opts.signal,
        retry: true,
        schema: taskResultSchema,
        extraTimeoutMs: (opts.wait ?? 0) * 1000,
      });
      return reply.data;
    },

    async cancel(id, opts = {}) {
      const reply = await transport.request({
        method: 'POST',
        path: task(id, '/cancel'),
        signal: opts.signal,
        // Not retried: a repeat after a lost answer would report 409 for our own cancel.
        retry: false,
        schema: taskHandleSchema,
      });
      return reply.data;
    },

    async input(id, value, opts = {}) {
      const reply = await transport.request({
        method: 'POST',
        path: task(id, '/input'),
        body: { input: value },
        signal: opts.signal,
        retry: false,
        schema: taskHandleSchema,
      });
      return reply.data;
    },

    async completeWaitpoint(id, data, opts = {}) {
      const reply = await transport.request({
        method: 'POST',
        path: `v1/waitpoints/${encodeURIComponent(id)}`,
        body: { data },
        signal: opts.signal,
        // Not retried: a repeat after a lost answer would report 409 for our own completion.
        retry: false,
        schema: waitpointResultSchema,
      });
      return reply.data;
    },

    async list(opts = {}) {
      const reply = await transport.request({
        method: 'GET',
        path: 'v1/jobs',
        query: {
          status: opts.status,
          type: opts.type,
          scheduleId: opts.scheduleId,
          tag: opts.tag,
          limit: opts.limit,
          cursor: opts.cursor,
        },
        signal: opts.signal,
        retry: true,
        schema: taskListSchema,
      });
      return reply.data;
    },

    events(id, opts) {
      return followEvents(transport, id, opts);
    },

    async forget(id, opts = {}) {
      await transport.request({
        method: 'DELETE',
        path: task(id),
        signal: opts.signal,
        retry: false,
      });
    },

    async jobTypes(opts = {}) {
      const reply = await transport.request({
        method: 'GET',
        path: 'v1/job-types',
        signal: opts.signal,
        retry: true,
        schema: jobTypeListSchema,
      });
      return reply.data.jobTypes;
    },
  };
}

/** A submit's body: the type, the input and the options the API reads. */
function submitBody(
  type: string,
  input: unknown,
  opts: Omit<SubmitOptions, 'idempotencyKey' | 'signal'> & { idempotencyKey?: string },
): Record<string, unknown> {
  const body: Record<string, unknown> = { type, input };
  if (opts.ttlMs !== undefined) body.ttlMs = opts.ttlMs;
  if (opts.callback !== undefined) body.callback = opts.callback;
  if (opts.priority !== undefined) body.priority = opts.priority;
  if (opts.delayMs !== undefined) body.delayMs = opts.delayMs;
  if (opts.runAt !== undefined) {
    body.runAt = opts.runAt instanceof Date ? opts.runAt.toISOString() : opts.runAt;
  }
  if (opts.timeoutMs !== undefined) body.timeoutMs = opts.timeoutMs;
  if (opts.tags !== undefined) body.tags = opts.tags;
  return body;
}
