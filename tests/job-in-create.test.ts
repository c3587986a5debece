import { Redis } from 'ioredis';
import { connect } from 'node:net';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { TaskQueue, TaskStore, type JobPlacement } from '@longrun/engine/internal';
import { captureAdd } from '../packages/engine/src/bullmq-adapter.js';
import { httpClient } from './helpers/http.js';
import { startApiProcess } from './helpers/processes.js';
import { newRecord } from './helpers/records.js';
import { API_KEYS, KEY_A, registerTypes, uniquePrefix } from './helpers/service.js';

// The create script adds the task's BullMQ job (decision 39; standard and prioritized ones by the
// adapter's quick add, decision 69, delayed ones by BullMQ's own add script): the job it writes
// must be the one `Queue.add` writes, whatever the add (standard, prioritized, delayed, its own
// queue), and a refused create must add none.

const redis = new Redis(inject('redisUrl'));
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const done of cleanup) await done();
  await redis.quit();
});

const echo: JobPlacement = { name: 'echo' };
const own: JobPlacement = { name: 'render', queue: 'render', attempts: 3, backoffMs: 500 };

function setup() {
  const prefix = uniquePrefix();
  const store = new TaskStore(redis, prefix, 86_400_000);
  const jobs = new TaskQueue({ connection: redis, prefix, types: new Map([['render', own]]) });
  return { prefix, store, jobs };
}

/**
 * A job as Redis holds it, less what differs between two adds: its time, its id, and its delay
 * (counted from each add's own now) to the second; its options as BullMQ reads them (parsed: the
 * order of their keys is not BullMQ's concern).
 */
async function jobOf(jobs: TaskQueue, placement: JobPlacement, id: string) {
  const queue = jobs.queueFor(placement.name);
  const { timestamp, opts, delay, ...rest } = await redis.hgetall(queue.toKey(id));
  const seconds = (ms: string) => String(Math.round(Number(ms) / 1000));
  return {
    ...rest,
    delay: seconds(delay ?? ''),
    opts: JSON.parse(
      opts
        ?.replace(id, '<id>')
        .replace(/"delay":(\d+)/, (_, ms: string) => `"delay":${seconds(ms)}`) ?? 'null',
    ) as unknown,
    timestamp: timestamp ? 'set' : 'missing',
    state: await queue.getJobState(id),
  };
}

/** The events the queue's stream holds for a job, oldest first. */
async function eventsOf(jobs: TaskQueue, placement: JobPlacement, id: string) {
  const entries = await redis.xrange(jobs.queueFor(placement.name).toKey('events'), '-', '+');
  return entries
    .map(([, fields]) => Object.fromEntries(fieldPairs(fields)))
    .filter((e) => e.jobId === id)
    .map((e) => e.event);
}

function fieldPairs(fields: string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i < fields.length; i += 2) pairs.push([fields[i]!, fields[i + 1]!]);
  return pairs;
}

describe('the job added by the create', () => {
  it('is the job Queue.add writes: standard, prioritized, delayed, and on its own queue', async () => {
    const cases: { placement: JobPlacement; overrides: { priority?: number; runAt?: number } }[] = [
      { placement: echo, overrides: {} },
      { placement: echo, overrides: { priority: 4 } },
      { placement: echo, overrides: { runAt: Date.now() + 30_000 } },
      { placement: own, overrides: { priority: 2 } },
    ];
    for (const { placement, overrides } of cases) {
      const { store, jobs } = setup();
      const [viaCreate, viaAdd] = [newRecord(overrides), newRecord(overrides)];
      viaAdd.input = viaCreate.input = { n: 7, text: 'same' };
      viaAdd.createdAt = viaCreate.createdAt;
      const job = jobs.prepare(viaCreate, placement);
      expect(job?.tag).toBe(overrides.runAt ? 'd' : overrides.priority ? 'P' : 'S');
      expect(await store.createMany([{ record: viaCreate, job }])).toEqual([{ created: true }]);
      await store.create(viaAdd);
      await jobs.enqueue(viaAdd, placement);

      const [a, b] = [
        await jobOf(jobs, placement, viaCreate.id),
        await jobOf(jobs, placement, viaAdd.id),
      ];
      expect(a.timestamp).toBe('set');
      // The data differs in nothing but what each record holds (the same input and expiry).
      expect(a).toEqual(b);
      expect(await eventsOf(jobs, placement, viaCreate.id)).toEqual(
        await eventsOf(jobs, placement, viaAdd.id),
      );
      expect(a.state).toBe(
        overrides.runAt ? 'delayed' : overrides.priority ? 'prioritized' : 'waiting',
      );
    }
  });

  it("under fair share carries the create's priority, in the job's field, options and score", async () => {
    const { store, jobs } = setup();
    const queue = jobs.queueFor('echo');
    const fair = {
      key: store.keys.fairShare(queue.name),
      head: queue.toKey('prioritized'),
      step: 1,
      offset: 0,
    };
    const records = ['a', 'a', 'b', 'a'].map((tenant) => newRecord({ tenant }));
    const outcomes = await store.createMany(
      records.map((record) => ({
        record,
        fair,
        job: jobs.prepare(record, echo, { fairShare: true }),
      })),
    );
    expect(outcomes.map((o) => ('priority' in o ? o.priority : undefined))).toEqual([1, 2, 1, 3]);
    for (const [i, record] of records.entries()) {
      const job = await queue.getJob(record.id);
      const priority = outcomes[i] && 'priority' in outcomes[i] ? outcomes[i].priority : -1;
      expect(job?.priority).toBe(priority);
      expect(job?.opts.priority).toBe(priority);
      expect(job?.data).toMatchObject({ tenant: record.tenant, input: record.input });
    }
    // BullMQ's order: a's first, b's first, a's second, a's third.
    const order = await redis.zrange(queue.toKey('prioritized'), 0, -1);
    expect(order).toEqual([records[0]!.id, records[2]!.id, records[1]!.id, records[3]!.id]);
  });

  it('writes the fair priority into the options: built by quickAdd, over the placeholder in place, or repacked', async () => {
    const { store, jobs } = setup();
    const queue = jobs.queueFor('echo');
    const fair = (offset: number) => ({
      key: store.keys.fairShare(queue.name),
      head: queue.toKey('prioritized'),
      step: 1,
      offset,
    });
    // A fair-share job is prepared by quickAdd (tag P), its priority added by the create. BullMQ
    // packs the placeholder as 0xce and four bytes after the key: what the script finds in an
    // add captureAdd built (any add quickAdd leaves to BullMQ).
    expect(jobs.prepare(newRecord(), echo, { fairShare: true })?.tag).toBe('P');
    const placeholder = Buffer.from([0xa8, ...Buffer.from('priority'), 0xce, 0, 0x1f, 0xff, 0xff]);
    const captured = (id: string, priority: number) =>
      captureAdd(queue, 'echo', { tenant: 't' }, { jobId: id, priority, attempts: 1 });
    expect(Buffer.from(captured('x', 0x1fffff)!.args[2]).includes(placeholder)).toBe(true);
    // One tenant each (so each turn is 1): priorities of one to four bytes, and one job built
    // with a plain priority (no placeholder), which the script unpacks and repacks instead.
    const cases = [
      { offset: 0, way: 'captured' },
      { offset: 300, way: 'captured' },
      { offset: 70_000, way: 'captured' },
      { offset: 2_000_000, way: 'captured' },
      { offset: 41, way: 'plain' },
      { offset: 0, way: 'quick' },
      { offset: 70_000, way: 'quick' },
    ];
    const records = cases.map((_, i) => newRecord({ tenant: `t${i}` }));
    const outcomes = await store.createMany(
      cases.map(({ offset, way }, i) => ({
        record: records[i]!,
        fair: fair(offset),
        job:
          way === 'quick'
            ? jobs.prepare(records[i]!, echo, { fairShare: true })
            : captured(records[i]!.id, way === 'plain' ? 1 : 0x1fffff),
      })),
    );
    expect(outcomes.map((o) => ('priority' in o ? o.priority : undefined))).toEqual(
      cases.map(({ offset }) => 1 + offset),
    );
    for (const [i, record] of records.entries()) {
      const job = await queue.getJob(record.id);
      expect(job?.priority).toBe(1 + cases[i]!.offset);
      expect(job?.opts).toMatchObject({ priority: 1 + cases[i]!.offset, attempts: 1 });
    }
  });

  it('is not added when the create is refused (a claimed key, a full tenant)', async () => {
    const { store, jobs } = setup();
    const [first, again, capped, over] = [
      newRecord(),
      newRecord(),
      newRecord({ tenant: 'c' }),
      newRecord({ tenant: 'c' }),
    ];
    const claim = (id: string) => ({ key: store.keys.idempotency('t', 'k'), value: `${id} h` });
    const outcomes = await store.createMany([
      { record: first, idempotency: claim(first.id), job: jobs.prepare(first, echo) },
      { record: again, idempotency: claim(again.id), job: jobs.prepare(again, echo) },
      { record: capped, maxOpenTasks: 1, job: jobs.prepare(capped, echo) },
      { record: over, maxOpenTasks: 1, job: jobs.prepare(over, echo) },
    ]);
    expect(outcomes.map((o) => o.created)).toEqual([true, false, true, false]);
    const queue = jobs.queueFor('echo');
    expect(await queue.getJobState(first.id)).toBe('waiting');
    expect(await queue.getJobState(capped.id)).toBe('waiting');
    expect(await queue.getJobState(again.id)).toBe('unknown');
    expect(await queue.getJobState(over.id)).toBe('unknown');
    expect(await queue.getWaitingCount()).toBe(2);
  });
});

/**
 * The script calls (EVAL/EVALSHA lines) MONITOR reports that name `prefix`, on a plain socket:
 * ioredis's monitor mode can take a line that arrives with MONITOR's own OK for a reply to a
 * command (its "Command queue state error") when the server is busy, as the shared one is.
 */
async function monitorScripts(url: string, prefix: string): Promise<{ lines: string[] }> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port || 6379) });
  cleanup.push(async () => void socket.destroy());
  const seen = { lines: [] as string[] };
  let buffer = '';
  let ok: () => void;
  const started = new Promise<void>((r) => (ok = r));
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (line === '+OK') ok();
      else if (/^\+[\d.]+ \[[^\]]*\] "eval/i.test(line) && line.includes(prefix))
        seen.lines.push(line);
    }
  });
  socket.write('MONITOR\r\n');
  await started;
  return seen;
}

describe('a submit on the API process (Node, and Bun in the second pass)', () => {
  it('is one script call: the job comes with the record, not after it', async () => {
    const prefix = uniquePrefix();
    await registerTypes(redis, prefix);
    // Started as the load tests start it: no rate limit (its counter is a script of its own).
    const api = await startApiProcess(
      { add: (stop) => cleanup.push(async () => stop()) },
      { REDIS_URL: inject('redisUrl'), LONGRUN_PREFIX: prefix, LONGRUN_API_KEYS: API_KEYS },
    );
    const http = httpClient(api.url, KEY_A);
    // The first submit may load the scripts (EVALSHA, NOSCRIPT, EVAL): the second is counted.
    expect((await http('POST', '/v1/jobs', { body: { type: 'echo', input: {} } })).status).toBe(
      202,
    );
    const scripts = await monitorScripts(inject('redisUrl'), prefix);
    const res = await http('POST', '/v1/jobs', { body: { type: 'echo', input: { n: 1 } } });
    expect(res.status, res.text).toBe(202);
    const id = res.body.taskId as string;
    // MONITOR reports a command once it has run, on its own connection: wait until the create
    // is seen, then a little longer for a later script that would add the job after it. Only
    // scripts naming this task count (the API's timers run scripts under the same prefix).
    const mine = () => scripts.lines.filter((line) => line.includes(id));
    for (let i = 0; i < 100 && mine().length === 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    const seen = mine();
    expect(seen, seen.join('\n')).toHaveLength(1);
    const [call = ''] = seen;
    expect(call).toContain(`:task:${id}"`);
    expect(call).toContain(':tasks.echo:prioritized"'); // BullMQ's keys
    const job = await redis.keys(`${prefix}*:tasks.echo:${id}`);
    expect(job).toHaveLength(1);
  });
});
