import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { FIELD } from '@longrun/core';
import {
  createRedis,
  JobTypeDirectory,
  Reconciler,
  TaskStore,
  WebhookDispatcher,
  WebhookTargetPolicy,
} from '@longrun/engine/internal';
import { newRecord } from './helpers/records.js';
import { httpClient, waitFor } from './helpers/http.js';
import { startApp, type Proc } from './helpers/processes.js';
import {
  API_KEYS,
  KEY_A,
  registerTypes,
  startInProcessApi,
  startWorker,
  uniquePrefix,
  type InProcessApi,
  oneShard,
} from './helpers/service.js';

// This file writes one shard's keys by hand to stage crashes.
oneShard();

// The reconciler maps BullMQ's view back onto the records. Each case leaves a task the way a
// process that died between two writes (or an operator) would, by really killing the process at
// that point (LONGRUN_TEST_CRASH_AT), then checks that a worker's reconciler repairs it.

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
});

const redis = new Redis(inject('redisUrl'));
cleanup.push(() => redis.quit());

/** A worker whose reconciler sweeps every 200 ms and leaves tasks alone for 300 ms only. */
const FAST_RECONCILER = {
  LONGRUN_RECONCILE_INTERVAL_MS: '200',
  LONGRUN_RECONCILE_GRACE_MS: '300',
};

async function worker(prefix: string, env: Record<string, string> = {}): Promise<Proc> {
  const w = await startWorker(prefix, env);
  cleanup.push(() => w.stop());
  return w;
}

async function api(): Promise<InProcessApi> {
  const a = await startInProcessApi();
  cleanup.push(() => a.close());
  return a;
}

async function statusOf(prefix: string, id: string): Promise<string | null> {
  return redis.hget(`${prefix}:task:${id}`, FIELD.status);
}

describe('a task whose job never arrived', () => {
  it('is queued again, with its priority, when the API died between record and job', async () => {
    const prefix = uniquePrefix();
    await registerTypes(redis, prefix); // as a worker would have: the API accepts echo
    const crashing = await startApp('api', {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
      PORT: '0',
      HOST: '127.0.0.1',
      LONGRUN_TEST_CRASH_AT: 'after-create',
    });
    cleanup.push(() => crashing.kill());
    const http = httpClient(`http://127.0.0.1:${crashing.ready.port as number}`, KEY_A);
    // The API is killed while it answers: the request fails, the record stays behind.
    await expect(
      http('POST', '/v1/jobs', {
        body: { type: 'echo', input: { n: 7 }, priority: 7 },
        headers: { 'idempotency-key': `crash-${prefix}` },
      }),
    ).rejects.toThrow();
    await new Promise<void>((r) => crashing.child.once('exit', () => r()));
    const [member] = await redis.zrange(`${prefix}:tenant:alpha:tasks`, 0, 0);
    const id = (member ?? '').slice(14);
    expect(await statusOf(prefix, id)).toBe('working');
    expect(await redis.exists(`${prefix}:tasks.echo:${id}`)).toBe(0); // no job

    // Paused, so the re-added job can be looked at before it runs.
    const a = await startInProcessApi({ prefix });
    cleanup.push(() => a.close());
    await a.tasks.queueFor('echo').pause();
    await worker(prefix, FAST_RECONCILER);
    const job = await waitFor(async () => a.tasks.queueFor('echo').getJob(id), {
      what: 'the re-added job',
    });
    expect(job.opts.priority).toBe(7);
    await a.tasks.queueFor('echo').resume();
    await waitFor(async () => (await statusOf(prefix, id)) === 'completed', { what: 'completed' });
    expect((await a.http('GET', `/v1/jobs/${id}`)).body.result).toEqual({ n: 7 });
    expect(await redis.hget(`${prefix}:task:${id}`, FIELD.repairs)).toBe('1');
  });
});

describe('a job parked without its input_required', () => {
  it('is woken, and asks again, when the worker died between parking and recording', async () => {
    const a = await api();
    const crashing = await startWorker(a.prefix, {
      LONGRUN_TEST_CRASH_AT: 'after-park',
      LONGRUN_RECONCILE_INTERVAL_MS: '0',
    });
    cleanup.push(() => crashing.kill());
    const res = await a.http('POST', '/v1/jobs', {
      body: { type: 'approval', input: { question: 'ship it?' } },
    });
    const id = res.body.taskId as string;
    await new Promise<void>((r) => crashing.child.once('exit', () => r()));
    expect(await statusOf(a.prefix, id)).toBe('working');
    expect(await redis.zscore(`${a.prefix}:tasks.approval:delayed`, id)).not.toBeNull();

    await worker(a.prefix, FAST_RECONCILER);
    const asking = await waitFor(
      async () => {
        const poll = await a.http('GET', `/v1/jobs/${id}`);
        return poll.body.status === 'input_required' ? poll : undefined;
      },
      { what: 'input_required' },
    );
    expect(asking.body.inputRequest.message).toBe('ship it?');
    await a.http('POST', `/v1/jobs/${id}/input`, { body: { input: { approved: true } } });
    await waitFor(async () => (await statusOf(a.prefix, id)) === 'completed', { what: 'done' });
  });
});

describe('a started task whose job was removed outside longrun', () => {
  it('fails with a message that says so', async () => {
    const a = await api();
    const queue = a.tasks.queueFor('sleep');
    await queue.pause();
    const res = await a.http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 10 } } });
    const id = res.body.taskId as string;
    // As if a run had started and the job were then removed from the queue UI.
    expect((await a.store.transition(id, 'start', { started: true })).ok).toBe(true);
    expect(await queue.remove(id)).toBe(1);
    await worker(a.prefix, FAST_RECONCILER);
    const failed = await waitFor(
      async () => {
        const poll = await a.http('GET', `/v1/jobs/${id}`);
        return poll.body.status === 'failed' ? poll : undefined;
      },
      { what: 'failed' },
    );
    expect(failed.body.error).toMatchObject({ code: 'job-lost' });
    expect(failed.body.error.message).toMatch(/removed/);
  });
});

describe('the webhook relay', () => {
  it('leaves no consumer behind in the outbox group, closed or crashed', async () => {
    const prefix = uniquePrefix();
    const connection = createRedis(inject('redisUrl'), 'worker');
    const relay = createRedis(inject('redisUrl'), 'worker');
    cleanup.push(async () => {
      connection.disconnect();
      relay.disconnect();
    });
    const dispatcher = (name: string) =>
      new WebhookDispatcher({
        connection,
        relayConnection: relay,
        prefix,
        maxTtlMs: 60_000,
        pollIntervalMs: 1000,
        policy: new WebhookTargetPolicy([]),
        logger: pino({ level: 'silent' }),
        consumerName: name,
        deadConsumerMs: 200,
      });
    const outbox = `${prefix}:outbox`;
    const consumers = async () =>
      ((await redis.xinfo('CONSUMERS', outbox, 'relay')) as string[][]).map((c) => String(c[1]));
    const names: string[] = [];
    for (const name of ['restart-1', 'restart-2', 'restart-3']) {
      const d = dispatcher(name);
      await d.start();
      // An entry for this relay to move, so that it becomes a consumer of the group.
      await redis.xadd(outbox, '*', 'task', crypto.randomUUID(), 'event', '1');
      await waitFor(async () => (await redis.xlen(outbox)) === 0, { what: 'entry relayed' });
      names.push(...(await consumers()));
      await d.close();
    }
    expect(names).toEqual(['restart-1', 'restart-2', 'restart-3']); // each was one, in its time
    expect(await consumers()).toEqual([]);
    // A relay that died without closing: a consumer, with nothing pending, that reads no more.
    const id = String(await redis.xadd(outbox, '*', 'task', 'x', 'event', '1'));
    await redis.xreadgroup('GROUP', 'relay', 'crashed', 'COUNT', 1, 'STREAMS', outbox, '>');
    await redis.xack(outbox, 'relay', id);
    expect(await consumers()).toEqual(['crashed']);
    await new Promise((r) => setTimeout(r, 300));
    const live = dispatcher('live');
    await live.start();
    try {
      await expect.poll(consumers).not.toContain('crashed');
    } finally {
      await live.close();
    }
  });
});

describe('the sweep', () => {
  /** A worker-role reconciler over `prefix` that checks `batch` tasks per sweep, with no grace. */
  async function reconciler(prefix: string, batch: number) {
    const connection = createRedis(inject('redisUrl'), 'worker');
    const types = new JobTypeDirectory({ connection, prefix, refreshMs: 0 });
    const r = new Reconciler({
      connection,
      prefix,
      types,
      maxTtlMs: 86_400_000,
      graceMs: 0,
      batch,
      intervalMs: 5, // the sweep lock lasts this long
      logger: pino({ level: 'silent' }),
    });
    cleanup.push(async () => {
      await r.stop();
      connection.disconnect();
    });
    return r;
  }

  /** `n` records of `tenant` with no job, as a crash between record and job leaves them. */
  async function orphans(store: TaskStore, tenant: string, n: number): Promise<string[]> {
    // Created in the same millisecond: their open-set entries tie on score (expiry).
    const createdAt = Date.now();
    const records = Array.from({ length: n }, () =>
      newRecord({ tenant, ttlMs: 3_600_000, createdAt, updatedAt: createdAt }),
    );
    const outcomes = await store.createMany(records.map((record) => ({ record })));
    expect(outcomes.every((o) => o.created)).toBe(true);
    return records.map((r) => r.id);
  }

  it('reaches every open task of every tenant, a batch at a time, and comes round again', async () => {
    const prefix = uniquePrefix();
    await registerTypes(redis, prefix);
    const store = new TaskStore(redis, prefix, 86_400_000);
    const ids = [
      ...(await orphans(store, 'alpha', 7)),
      ...(await orphans(store, 'beta', 1)),
      ...(await orphans(store, 'gamma', 5)),
    ];
    // Finished tasks are not looked at: one of each tenant's completes first.
    const done = [ids[0], ids[7], ids[8]] as string[];
    for (const id of done) expect((await store.transition(id, 'complete')).ok).toBe(true);
    const r = await reconciler(prefix, 3);
    const later = Date.now() + 1000;
    const sweep = async () => {
      await new Promise((resolve) => setTimeout(resolve, 20)); // the last sweep's lock gone
      return (await r.sweep(later)).requeue;
    };
    let requeued = 0;
    // 10 open tasks, 3 per sweep: 4 sweeps reach them all, the 5th starts over.
    for (let i = 0; i < 4; i++) requeued += await sweep();
    expect(requeued).toBe(10);
    for (const id of ids) {
      const repairs = await redis.hget(`${prefix}:task:${id}`, FIELD.repairs);
      expect([id, repairs]).toEqual([id, done.includes(id) ? null : '1']);
      const job = await redis.exists(`${prefix}:tasks.echo:${id}`);
      expect([id, job]).toEqual([id, done.includes(id) ? 0 : 1]);
    }
    // Round again: every job is there now, so nothing more to repair, and nothing is lost.
    let again = 0;
    for (let i = 0; i < 4; i++) again += await sweep();
    expect(again).toBe(0);
    // beta's only task finished: its open set is gone, and so is beta from the walk.
    expect(await redis.zrange(`${prefix}:open-tenant-names`, 0, -1)).toEqual(['alpha', 'gamma']);
  });

  it('reads the tenants a page of names at a time, and takes over the plain set of an older version', async () => {
    const prefix = uniquePrefix();
    await registerTypes(redis, prefix);
    const store = new TaskStore(redis, prefix, 86_400_000);
    // More tenants than one page of names (100), one open task each; ids in name order.
    const tenants = Array.from({ length: 230 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    const records = tenants.map((tenant) => newRecord({ tenant, ttlMs: 3_600_000 }));
    for (let i = 0; i < records.length; i += 50) {
      const outcomes = await store.createMany(
        records.slice(i, i + 50).map((record) => ({ record })),
      );
      expect(outcomes.every((o) => o.created)).toBe(true);
    }
    // Every third tenant as the version before left it: in the plain set only.
    const old = tenants.filter((_, i) => i % 3 === 0);
    await redis.zrem(`${prefix}:open-tenant-names`, ...old);
    await redis.sadd(`${prefix}:open-tenants`, ...old);
    const r = await reconciler(prefix, 500);
    expect((await r.sweep(Date.now() + 1000)).requeue).toBe(230);
    for (const { id } of records) expect(await redis.exists(`${prefix}:tasks.echo:${id}`)).toBe(1);
    expect(await redis.exists(`${prefix}:open-tenants`)).toBe(0);
    expect(await redis.zrange(`${prefix}:open-tenant-names`, 0, -1)).toEqual(tenants);
  });

  it('takes over what an older version left in the set of every open task', async () => {
    const prefix = uniquePrefix();
    await registerTypes(redis, prefix);
    const store = new TaskStore(redis, prefix, 86_400_000);
    const open = await orphans(store, 'old', 4);
    const finished = (await orphans(store, 'old', 1))[0] as string;
    expect((await store.transition(finished, 'complete')).ok).toBe(true);
    // As a version before the set of tenants left them: every open task in one sorted set.
    await redis.del(`${prefix}:open-tenant-names`);
    await redis.zadd(`${prefix}:open`, ...[...open, finished].flatMap((id) => [0, id]));
    const r = await reconciler(prefix, 2);
    const later = Date.now() + 1000;
    let requeued = 0;
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      requeued += (await r.sweep(later)).requeue;
    }
    expect(requeued).toBe(4);
    expect(await redis.exists(`${prefix}:open`)).toBe(0);
    expect(await redis.zrange(`${prefix}:open-tenant-names`, 0, -1)).toEqual(['old']);
    for (const id of open) expect(await redis.exists(`${prefix}:tasks.echo:${id}`)).toBe(1);
  });
});
