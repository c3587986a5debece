import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { newTaskId, shardOfTaskId, shardPrefix } from '@longrun/engine/internal';
import { waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import {
  startInProcessApi,
  startWorker,
  uniquePrefix,
  type InProcessApi,
} from './helpers/service.js';

/**
 * Shards on one Redis (decision 37): the same code paths as on a cluster (per-shard keys and
 * queues, ids naming shards), checked where one Redis lets the test look at every key.
 */
const apis: InProcessApi[] = [];
const procs: Proc[] = [];
const redis = new Redis(inject('redisUrl'));

afterAll(async () => {
  for (const p of procs) await p.stop();
  for (const a of apis) await a.close();
  redis.disconnect();
});

async function api(opts: Parameters<typeof startInProcessApi>[0]): Promise<InProcessApi> {
  const started = await startInProcessApi(opts);
  apis.push(started);
  return started;
}

async function worker(prefix: string, env: Record<string, string> = {}): Promise<Proc> {
  // Not told how many shards: it serves what the API processes announced.
  const proc = await startWorker(prefix, { LONGRUN_SHARDS: '', ...env });
  procs.push(proc);
  return proc;
}

async function submit(a: InProcessApi, body: unknown, headers: Record<string, string> = {}) {
  const res = await a.http('POST', '/v1/jobs', { body, headers });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId as string;
}

async function finished(a: InProcessApi, id: string): Promise<string> {
  const res = await a.http('GET', `/v1/jobs/${id}/result?wait=15`);
  return res.body.status as string;
}

describe('shards on one Redis', () => {
  it('puts each task under its shard’s prefix; a worker not told the count serves them all', async () => {
    const prefix = uniquePrefix();
    const a = await api({ prefix, shards: 3 });
    const w = await worker(prefix);
    expect(w.ready.shards).toEqual([0, 1, 2]);
    const ids = await Promise.all(
      Array.from({ length: 12 }, (_, n) => submit(a, { type: 'echo', input: { n } })),
    );
    expect(new Set(ids.map(shardOfTaskId))).toEqual(new Set([0, 1, 2]));
    for (const id of ids) {
      const shard = shardPrefix(prefix, shardOfTaskId(id));
      expect(await redis.exists(`${shard}:task:${id}`), id).toBe(1);
      expect(await finished(a, id)).toBe('completed');
    }
    // Nothing of these tasks under another shard's prefix.
    const stray = await redis.keys(`${prefix}.s1:task:${ids.find((i) => shardOfTaskId(i) !== 1)}`);
    expect(stray).toEqual([]);
  });

  it('an idempotency key maps to one shard, so a replay finds its task', async () => {
    const a = await api({ shards: 4 });
    for (let i = 0; i < 12; i++) {
      const body = { type: 'echo', input: { i } };
      const headers = { 'idempotency-key': `key-${i}` };
      const first = await submit(a, body, headers);
      const again = await a.http('POST', '/v1/jobs', { body, headers });
      expect(again.body.taskId).toBe(first);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
  });

  it('holds an open-task cap over the shards', async () => {
    const a = await api({ shards: 2, maxOpenTasks: 4 });
    // No worker: the sleeps stay open.
    for (let i = 0; i < 4; i++) await submit(a, { type: 'sleep', input: { ms: 60_000 } });
    const over = await a.http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 1 } } });
    expect(over.status, over.text).toBe(429);
    expect(over.body.detail).toMatch(/has 4 unfinished tasks \(the cap is 4\)/);
  });

  it('gives keyed tasks and big tasks the whole cap, whatever shard they land on', async () => {
    const shards = 8;
    const a = await api({ shards, maxOpenTasks: 4, tenantMaxBytes: 8000 });
    // Three idempotency keys that land on one shard (a share of the cap there is 1).
    const home = (key: string) =>
      createHash('sha256').update('alpha').update('\n').update(key).digest().readUInt32BE(0) %
      shards;
    const keys: string[] = [];
    for (let i = 0; keys.length < 3; i++) if (home(`k${i}`) === home('k0')) keys.push(`k${i}`);
    const sleep = { type: 'sleep', input: { ms: 60_000 } };
    const ids = [];
    for (const key of keys) ids.push(await submit(a, sleep, { 'idempotency-key': key }));
    expect(new Set(ids.map(shardOfTaskId)).size).toBe(1);
    await submit(a, sleep);
    const over = await a.http('POST', '/v1/jobs', {
      body: sleep,
      headers: { 'idempotency-key': 'x' },
    });
    expect(over.status, over.text).toBe(429);
    expect(over.body.detail).toMatch(/has 4 unfinished tasks \(the cap is 4\)/);
    // A task bigger than an eighth of the byte budget is stored, whatever shard it lands on.
    const roomy = await api({ shards, tenantMaxBytes: 8000 });
    const big = await roomy.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: { pad: 'x'.repeat(2500) } },
    });
    expect(big.status, big.text).toBe(202);
  });

  it('answers a made-up id naming a shard no API announced as missing, without making it', async () => {
    const a = await api({ shards: 2 });
    const id = newTaskId(1000);
    expect((await a.http('GET', `/v1/jobs/${id}`)).status).toBe(404);
    expect((await a.http('POST', `/v1/jobs/${id}/cancel`)).status).toBe(404);
    expect(a.parts.shardOf(id)).toBe(a.parts.shards[0]);
  });

  it('pages newest first over the shards; ids keep their shard when the count changes', async () => {
    const prefix = uniquePrefix();
    const four = await api({ prefix, shards: 4 });
    const made: string[] = [];
    for (let i = 0; i < 17; i++) made.push(await submit(four, { type: 'echo', input: { i } }));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const path: string = `/v1/jobs?limit=5${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await four.http('GET', path);
      seen.push(...page.body.tasks.map((t: { taskId: string }) => t.taskId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...made].reverse());

    // The count lowered to 2 (an API restarted with LONGRUN_SHARDS=2): a task on shard 3 is
    // still read, cancelled and forgotten by its id; new tasks go to shards 0 and 1 only.
    const two = await api({ prefix, shards: 2 });
    const onThree = made.find((id) => shardOfTaskId(id) === 3) as string;
    expect((await two.http('GET', `/v1/jobs/${onThree}`)).status).toBe(200);
    expect((await two.http('POST', `/v1/jobs/${onThree}/cancel`)).body.status).toBe('cancelled');
    expect((await two.http('DELETE', `/v1/jobs/${onThree}`)).status).toBe(204);
    expect((await two.http('GET', `/v1/jobs/${onThree}`)).status).toBe(404);
    const later = await Promise.all(
      Array.from({ length: 8 }, () => submit(two, { type: 'echo', input: {} })),
    );
    expect(new Set(later.map(shardOfTaskId))).toEqual(new Set([0, 1]));
    // Its metrics still count shards 2 and 3, so the drain can be watched.
    const metrics = (await two.http('GET', '/metrics')).text;
    expect(metrics).toMatch(
      /longrun_queue_jobs\{queue="tasks\.echo",state="prioritized",shard="3"\} [1-9]/,
    );
    // A worker started now serves the 4 announced (the highest count stays), so shards 2 and 3
    // are drained.
    const w = await worker(prefix);
    expect(w.ready.shards).toEqual([0, 1, 2, 3]);
    for (const id of made.filter((i) => i !== onThree))
      expect(await finished(four, id)).toBe('completed');
  });

  it('a running worker starts serving shards the API processes add', async () => {
    const prefix = uniquePrefix();
    await api({ prefix, shards: 2 });
    const w = await worker(prefix);
    expect(w.ready.shards).toEqual([0, 1]);
    const six = await api({ prefix, shards: 6 });
    await waitFor(async () => w.lines.some((l) => l.includes('serving more shards')), {
      what: 'the worker to serve the added shards',
      timeoutMs: 15_000,
    });
    const ids = await Promise.all(
      Array.from({ length: 12 }, (_, n) => submit(six, { type: 'echo', input: { n } })),
    );
    expect(new Set(ids.map(shardOfTaskId)).size).toBe(6);
    for (const id of ids) expect(await finished(six, id)).toBe('completed');
  });

  it('exports queue depth per shard and shows every shard’s queues in the admin UI', async () => {
    const a = await api({ shards: 3, adminKeys: ['admin-key-0123456789'] });
    const metrics = (await a.http('GET', '/metrics')).text;
    for (const shard of ['0', '1', '2']) {
      expect(metrics).toContain(
        `longrun_queue_jobs{queue="tasks.echo",state="waiting",shard="${shard}"}`,
      );
    }
    const queues = await a.http('GET', '/admin/queues/api/queues', { key: 'admin-key-0123456789' });
    expect(queues.status, queues.text).toBe(200);
    const names = (queues.body.queues as { name: string }[]).map((q) => q.name);
    expect(names).toEqual(expect.arrayContaining(['s0 tasks', 's1 tasks', 's2 tasks']));
  });
});
