// Reads stay open while Redis is full (maxmemory, noeviction): a task's handle and history are
// read, only writes are refused. Redis refuses every command queued in a MULTI once it is past
// maxmemory, reads too, so no read may go through a transaction. Own redis-server (it is filled).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskLog, TaskStore, taskKeys } from '@longrun/engine/internal';
// @ts-expect-error plain ESM helper shared with `npm start`
import { findRedisServer, freePort, startRedis } from '../scripts/redis.mjs';

const cleanups: (() => unknown)[] = [];
let redis: Redis;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'longrun-full-reads-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const server = (await startRedis({
    bin: findRedisServer(),
    port: await freePort(),
    dir,
    appendonly: false,
  })) as { url: string; stop(): Promise<void> };
  cleanups.push(() => server.stop());
  redis = new Redis(server.url);
  cleanups.push(() => redis.quit());
});
afterAll(async () => {
  for (const done of cleanups.reverse()) await done();
});

describe('a full Redis', () => {
  it("still answers a task's handle and its history", async () => {
    const prefix = `full-${randomUUID().slice(0, 8)}`;
    const store = new TaskStore(redis, prefix, 86_400_000);
    const log = new TaskLog(redis, taskKeys(prefix));
    const now = Date.now();
    const id = randomUUID();
    const created = await store.create({
      id,
      tenant: 'alpha',
      type: 'echo',
      status: 'working',
      statusMessage: 'queued',
      createdAt: now,
      updatedAt: now,
      ttlMs: 86_400_000,
      input: { n: 1 },
      cancelRequested: false,
      awaitingInput: false,
      inputs: [],
    });
    expect(created.created).toBe(true);
    await store.transition(id, 'start', {});
    await store.transition(id, 'progress', { progress: 40 });
    const before = await log.events(id, undefined);
    expect(before.map((e) => e.id)).toEqual(['1', '2', '3']);

    const used = Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))?.[1]);
    await redis.config('SET', 'maxmemory', String(Math.floor(used / 2)));
    try {
      // Writes are refused now...
      await expect(redis.set(`${prefix}:probe`, 'x')).rejects.toThrow(/OOM/);
      // ...reads are not.
      expect((await store.get(id))?.status).toBe('working');
      expect(await log.events(id, undefined)).toEqual(before);
      expect((await log.events(id, '1')).map((e) => e.id)).toEqual(['2', '3']);
    } finally {
      await redis.config('SET', 'maxmemory', '0');
    }
  });
});
