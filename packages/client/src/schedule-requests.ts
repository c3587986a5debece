import { randomUUID } from 'node:crypto';
import { scheduleListSchema, scheduleSchema } from '@longrun/core';
import type { LongrunClient } from './longrun-client.js';
import type { Transport } from './transport.js';
import type { JobTypeMap } from './types.js';

/** The client's schedule methods. */
export type ScheduleMethods<C extends JobTypeMap> = Pick<
  LongrunClient<C>,
  'createSchedule' | 'listSchedules' | 'getSchedule' | 'deleteSchedule'
>;

/**
 * The schedule methods of {@link LongrunClient}, over one transport.
 * @example const methods = scheduleMethods(new Transport(options))
 */
export function scheduleMethods<C extends JobTypeMap>(transport: Transport): ScheduleMethods<C> {
  const schedule = (id: string) => `v1/schedules/${encodeURIComponent(id)}`;

  return {
    async createSchedule(type, input, opts) {
      const body: Record<string, unknown> = { type, input };
      if (opts.cron !== undefined) body.cron = opts.cron;
      if (opts.tz !== undefined) body.tz = opts.tz;
      if (opts.everyMs !== undefined) body.everyMs = opts.everyMs;
      if (opts.ttlMs !== undefined) body.ttlMs = opts.ttlMs;
      if (opts.timeoutMs !== undefined) body.timeoutMs = opts.timeoutMs;
      const reply = await transport.request({
        method: 'POST',
        path: 'v1/schedules',
        body,
        headers: { 'idempotency-key': opts.idempotencyKey ?? randomUUID() },
        signal: opts.signal,
        retry: true, // safe: every attempt carries the same Idempotency-Key
        schema: scheduleSchema,
      });
      return reply.data;
    },

    async listSchedules(opts = {}) {
      const reply = await transport.request({
        method: 'GET',
        path: 'v1/schedules',
        signal: opts.signal,
        retry: true,
        schema: scheduleListSchema,
      });
      return reply.data.schedules;
    },

    async getSchedule(id, opts = {}) {
      const reply = await transport.request({
        method: 'GET',
        path: schedule(id),
        signal: opts.signal,
        retry: true,
        schema: scheduleSchema,
      });
      return reply.data;
    },

    async deleteSchedule(id, opts = {}) {
      await transport.request({
        method: 'DELETE',
        path: schedule(id),
        signal: opts.signal,
        retry: false,
      });
    },
  };
}
