import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coalesceWrites, createRedis, TaskStore } from '@longrun/engine/internal';
import { newRecord } from './helpers/records.js';
import { adminRedis, Cleanups, privateRedis, tempDir, type PrivateRedis } from './chaos/helpers.js';

// A private redis-server: `total_reads_processed` counts the reads of every client, so no other
// test may share it.
const cleanups = new Cleanups();
let server: PrivateRedis;
let admin: Redis;
beforeAll(async () => {
  server = await privateRedis(cleanups, { dir: tempDir(cleanups, 'coalesce') });
  admin = adminRedis(cleanups, server.url);
});
afterAll(() => cleanups.run());

async function readsBy(burst: () => Promise<unknown>): Promise<number> {
  const reads = async () =>
    Number(/total_reads_processed:(\d+)/.exec(await admin.info('stats'))?.[1] ?? NaN);
  const before = await reads();
  await burst();
  // One read is the second INFO's own.
  return (await reads()) - before - 1;
}

/** A producer connection (no offline queue, as the API's), ready to use. */
async function connect(coalesced: boolean): Promise<Redis> {
  const redis = coalesced ? createRedis(server.url, 'producer') : new Redis(server.url);
  cleanups.add(() => redis.quit().catch(() => redis.disconnect()));
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  return redis;
}

describe('write coalescing (producer connections)', () => {
  it('sends the commands of one event-loop turn to Redis in one write, in order', async () => {
    const redis = await connect(true);
    const key = `coalesce-${Date.now()}`;
    const reads = await readsBy(() =>
      Promise.all(Array.from({ length: 100 }, (_, i) => redis.rpush(key, String(i)))),
    );
    // 100 commands, one turn: Redis reads them in one go (two if its buffer split them).
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(2);
    expect(await redis.lrange(key, 0, -1)).toEqual(Array.from({ length: 100 }, (_, i) => `${i}`));
  });

  it('a connection without it writes command by command (what the test above would see)', async () => {
    const plain = await connect(false);
    const key = `plain-${Date.now()}`;
    // One command per turn, so the kernel cannot merge them either.
    const reads = await readsBy(async () => {
      for (let i = 0; i < 20; i++) await plain.rpush(key, String(i));
    });
    expect(reads).toBe(20);
  });

  it('commands issued in later turns still go out (each turn is flushed)', async () => {
    const redis = await connect(true);
    const key = `turns-${Date.now()}`;
    for (let i = 0; i < 5; i++) {
      await redis.incr(key);
      await sleep(1);
    }
    expect(await redis.get(key)).toBe('5');
  });

  it('pipelines and scripts work as before, and a reconnect gets a working socket', async () => {
    const redis = await connect(true);
    redis.defineCommand('double', {
      numberOfKeys: 1,
      lua: 'return redis.call("INCRBY", KEYS[1], ARGV[1]) * 2',
    });
    const key = `mixed-${Date.now()}`;
    const [piped, scripted] = await Promise.all([
      redis.pipeline().set(key, '1').incr(key).exec(),
      (redis as unknown as { double(k: string, n: number): Promise<number> }).double(`${key}:d`, 3),
    ]);
    expect(piped?.map(([, v]) => v)).toEqual(['OK', 2]);
    expect(scripted).toBe(6);

    const before = redis.stream;
    await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await sleep(50);
    await expect.poll(() => redis.status, { timeout: 5000 }).toBe('ready');
    expect(redis.stream).not.toBe(before);
    expect(await redis.incr(key)).toBe(3);
  });

  it('wraps a connection once it is made, too', async () => {
    const redis = coalesceWrites(new Redis(server.url));
    cleanups.add(() => redis.quit().catch(() => redis.disconnect()));
    await redis.ping();
    const reads = await readsBy(() =>
      Promise.all(Array.from({ length: 30 }, () => redis.incr(`late-${Date.now()}`))),
    );
    expect(reads).toBeLessThanOrEqual(2);
  });
});

describe('a script and a command sent after it in one write', () => {
  // A submit sends the record's script and BullMQ's add together (decision 12): the record must
  // be written first, also right after Redis restarted with an empty script cache. ioredis sends
  // a script in full (EVAL) the first time on each socket, so a reconnect cannot reorder them.
  it('run in order, also after a restart emptied the script cache', async () => {
    const redis = await connect(true);
    const store = new TaskStore(redis, `order-${Date.now()}`, 86_400_000);
    // The create script and a read sent in the same turn: the read must see the record.
    const createThenRead = async () => {
      const task = newRecord();
      const [, seen] = await Promise.all([
        store.create(task),
        redis.exists(store.keys.task(task.id)),
      ]);
      return seen;
    };
    await expect.poll(() => redis.status).toBe('ready');
    expect(await createThenRead()).toBe(1);

    // What a restarted Redis looks like: no scripts, and every client reconnects.
    await admin.script('FLUSH');
    const before = redis.stream;
    await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await expect
      .poll(() => redis.status === 'ready' && redis.stream !== before, { timeout: 5000 })
      .toBe(true);
    // Had the script gone out by its SHA, its NOSCRIPT would come back after the read ran, the
    // script would be resent after it, and the read would find nothing.
    expect(await createThenRead()).toBe(1);
  });
});
