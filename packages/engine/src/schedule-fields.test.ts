import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SCHEDULE_FIELD, scheduleFieldsLua } from './schedule-fields.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

describe('generated/schedule', () => {
  it('defines every schedule field of SCHEDULE_FIELD, evaluated by Redis', async () => {
    const lua = `${scheduleFieldsLua()}\nreturn cjson.encode(SCHEDULE)`;
    expect(JSON.parse((await redis.eval(lua, 0)) as string)).toEqual(SCHEDULE_FIELD);
  });
});
