import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { dropIdleTenant } from './drop-idle-tenant.js';

const redis = new Redis(inject('redisUrl'));
const prefix = `test-${randomUUID()}`;
const tenants = `${prefix}:open-tenants`;
const open = `${prefix}:open:acme`;
afterAll(async () => {
  await redis.del(tenants, open);
  await redis.quit();
});

const drop = () => dropIdleTenant.run(redis, { keys: { tenants, open }, args: { tenant: 'acme' } });

describe('drop-idle-tenant', () => {
  it('leaves a tenant whose open set exists', async () => {
    await redis.zadd(tenants, 0, 'acme', 0, 'other');
    await redis.zadd(open, 1, 't1');
    expect(await drop()).toEqual({ kind: 'open' });
    expect(await redis.zrange(tenants, 0, -1)).toEqual(['acme', 'other']);
  });

  it('takes out a tenant whose open set is gone, once', async () => {
    await redis.del(open);
    expect(await drop()).toEqual({ kind: 'ok', removed: true });
    expect(await redis.zrange(tenants, 0, -1)).toEqual(['other']);
    expect(await drop()).toEqual({ kind: 'ok', removed: false });
  });
});
