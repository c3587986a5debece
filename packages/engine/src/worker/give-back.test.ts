import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { describeJobType } from '../registry/describe.js';
import { JobTypeRegistry } from '../registry/job-type-registry.js';
import { LiveTypes } from './give-back.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const type = (name: string) => describeJobType({ name, input: z.object({}), handler: () => null });

describe('LiveTypes', () => {
  it('says which types a live worker serves, from the registry, once it has been read', async () => {
    const registry = new JobTypeRegistry(redis, `test-${randomUUID()}`);
    await registry.publish('w-live', [type('served')], 60_000);
    // Registered once, its worker gone: known, but nobody serves it now.
    await registry.publish('w-gone', [type('orphan')], 60_000);
    await registry.withdraw('w-gone', [type('orphan')]);
    const live = new LiveTypes(registry);
    expect(live.served('served')).toBe(false); // not read yet: the first call starts the read
    await expect.poll(() => live.served('served')).toBe(true);
    expect(live.served('orphan')).toBe(false);
    expect(live.served('never-registered')).toBe(false);
  });
});
