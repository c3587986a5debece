import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SCHEDULE_FIELD } from '../schedule-fields.js';
import { noteScheduleError } from './note-schedule-error.js';

const redis = new Redis(inject('redisUrl'));
const schedule = `test-${randomUUID()}:schedule:s1`;
afterAll(async () => {
  await redis.del(schedule);
  await redis.quit();
});

const note = (error: string) =>
  noteScheduleError.run(redis, { keys: { schedule }, args: { error } });

describe('note-schedule-error', () => {
  it('refuses a schedule that is gone, and does not bring its hash back', async () => {
    expect(await note('{"message":"x","at":1}')).toEqual({ kind: 'gone' });
    expect(await redis.exists(schedule)).toBe(0);
  });

  it('notes the error, keeping the last run', async () => {
    await redis.hset(schedule, SCHEDULE_FIELD.lastRunAt, '3', SCHEDULE_FIELD.lastTaskId, 't1');
    expect(await note('{"message":"quota","at":9}')).toEqual({ kind: 'ok' });
    expect(await redis.hgetall(schedule)).toEqual({
      [SCHEDULE_FIELD.lastRunAt]: '3',
      [SCHEDULE_FIELD.lastTaskId]: 't1',
      [SCHEDULE_FIELD.lastError]: '{"message":"quota","at":9}',
    });
  });
});
