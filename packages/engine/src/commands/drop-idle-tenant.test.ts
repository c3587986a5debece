import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { taskKeys } from '../keys.js';
import { dropIdleTenant } from './drop-idle-tenant.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

describe('drop-idle-tenant', () => {
  it('drops a tenant whose open set is gone, and keeps one with open tasks', async () => {
    const keys = taskKeys(`test-${randomUUID()}`);
    await redis.zadd(keys.openTenants, 0, 'idle', 0, 'busy');
    await redis.zadd(keys.openTasks('busy'), 1, 'task');
    const drop = (tenant: string) =>
      dropIdleTenant.run(redis, {
        keys: { openTenants: keys.openTenants, open: keys.openTasks(tenant) },
        args: { tenant },
      });
    expect(await drop('busy')).toBe(false);
    expect(await drop('idle')).toBe(true);
    expect(await redis.zrange(keys.openTenants, 0, -1)).toEqual(['busy']);
  });
});
