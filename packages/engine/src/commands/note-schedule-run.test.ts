import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SCHEDULE_FIELD } from '../schedule-fields.js';
import { noteScheduleRun } from './note-schedule-run.js';

const redis = new Redis(inject('redisUrl'));
const schedule = `test-${randomUUID()}:schedule:s1`;
afterAll(async () => {
  await redis.del(schedule);
  await redis.quit();
});

const note = (at: number, task: string) =>
  noteScheduleRun.run(redis, { keys: { schedule }, args: { at, task } });

describe('note-schedule-run', () => {
  it('refuses a schedule that is gone, and does not bring its hash back', async () => {
    expect(await note(5, 't1')).toEqual({ kind: 'gone' });
    expect(await redis.exists(schedule)).toBe(0);
  });

  it('notes the run and its task, clearing the last error', async () => {
    await redis.hset(schedule, SCHEDULE_FIELD.tenant, 'acme', SCHEDULE_FIELD.lastError, '{}');
    expect(await note(7, 't2')).toEqual({ kind: 'ok' });
    expect(await redis.hgetall(schedule)).toEqual({
      [SCHEDULE_FIELD.tenant]: 'acme',
      [SCHEDULE_FIELD.lastRunAt]: '7',
      [SCHEDULE_FIELD.lastTaskId]: 't2',
    });
  });
});
