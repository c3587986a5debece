import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Queue, type JobsOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  ADD_IN_CREATE,
  ADD_KEYS,
  addScriptProblems,
  BULLMQ_ADD_LUA,
  BULLMQ_MAX_PRIORITY,
  BULLMQ_PRIORITIZED_LUA,
  BULLMQ_QUICK_ADD_LUA,
  BULLMQ_SCRIPTS_MODULE,
  BULLMQ_VERIFIED_VERSION,
  captureAdd,
  delayedDueAt,
  FAIR_PLACEHOLDER_BYTES,
  FAIR_PRIORITY_PLACEHOLDER,
  installedBullmqVersion,
  PRIORITY_SCORE_SHIFT,
  prioritizedPriority,
  queueKeys,
  quickAdd,
  SET_FAIR_PRIORITY_LUA,
  type JobAdd,
} from '../packages/engine/src/bullmq-adapter.js';
import { httpClient, waitFor } from './helpers/http.js';
import { startApiProcess } from './helpers/processes.js';
import { API_KEYS, KEY_A, registerTypes, startWorker, uniquePrefix } from './helpers/service.js';

// Pinned to the installed BullMQ (decision 59): everything of BullMQ's internals the engine relies
// on goes through packages/engine/src/bullmq-adapter.ts, and each thing it relies on is checked
// here against real Redis. Upgrading BullMQ must make this file fail first, naming what to
// re-check (its first test fails on any other version): then re-run the rest, fix the adapter,
// and record the new version in `BULLMQ_VERIFIED_VERSION`.

const root = resolve(import.meta.dirname, '..');
const requireEngine = createRequire(resolve(root, 'packages/engine/package.json'));
const redis = new Redis(inject('redisUrl'));
const queues: Queue[] = [];
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const done of cleanup.reverse()) await done().catch(() => undefined);
  await Promise.all(queues.map((q) => q.close()));
  await redis.quit();
});

function newQueue(): Queue {
  const queue = new Queue('tasks.echo', { connection: redis, prefix: uniquePrefix() });
  queue.on('error', () => undefined);
  queues.push(queue);
  return queue;
}

/** Runs a captured add as the create script does: BullMQ's add script, in Redis. */
async function runAdd(add: JobAdd, fairPriority?: number): Promise<unknown> {
  const opts =
    fairPriority === undefined ? 'ARGV[4]' : 'set_fair_priority(ARGV[4], tonumber(ARGV[5]))';
  const lua = `${BULLMQ_ADD_LUA}\n${SET_FAIR_PRIORITY_LUA}\nreturn bullmq_add(ARGV[1], KEYS, {ARGV[2], ARGV[3], ${opts}})`;
  const extra = fairPriority === undefined ? [] : [String(fairPriority)];
  return redis.eval(lua, ADD_KEYS, ...add.keys, add.tag, ...add.args, ...extra);
}

/**
 * Runs several captured adds in one script call, each by BullMQ's own script (`quick` false) or
 * by `bullmq_quick_add` (true; BullMQ's own when it declines, as create-many does);
 * `priorities[i]` replaces add i's priority as fair share does. Returns 1 for each add the quick
 * add made, 0 for the others.
 */
async function runAdds(
  adds: JobAdd[],
  quick: boolean,
  priorities: number[] = [],
): Promise<unknown> {
  const lua = `${BULLMQ_ADD_LUA}\n${SET_FAIR_PRIORITY_LUA}\n${BULLMQ_QUICK_ADD_LUA}
local out = {}
for i = 1, #ARGV / 5 do
  local keys = {}
  for j = 1, ${ADD_KEYS} do keys[j] = KEYS[(i - 1) * ${ADD_KEYS} + j] end
  local b = (i - 1) * 5
  local p = tonumber(ARGV[b + 5])
  out[i] = 0
  if ${quick ? 'true' : 'false'} and bullmq_quick_add(ARGV[b + 1], keys, {ARGV[b + 2], ARGV[b + 3], ARGV[b + 4]}, p) then
    out[i] = 1
  else
    -- as create-many does when the quick add declines
    local opts = ARGV[b + 4]
    if p then opts = set_fair_priority(opts, p) end
    bullmq_add(ARGV[b + 1], keys, {ARGV[b + 2], ARGV[b + 3], opts})
  end
end
return out`;
  const keys = adds.flatMap((a) => a.keys);
  const argv = adds.flatMap((a, i) => [a.tag, ...a.args, String(priorities[i] ?? '')]);
  return redis.eval(lua, keys.length, ...keys, ...argv);
}

/** Everything stored under a queue's prefix, the prefix and stream entry ids left out. */
async function queueState(queue: Queue): Promise<Record<string, unknown>> {
  const prefix = queue.toKey('');
  const state: Record<string, unknown> = {};
  for (const key of (await redis.keys(`${prefix}*`)).sort()) {
    const name = key.slice(prefix.length);
    const type = await redis.type(key);
    if (type === 'hash') {
      const hash = await redis.hgetall(key);
      // Options as BullMQ reads them back (JSON.parse): their keys' order is not BullMQ's.
      state[name] = hash.opts ? { ...hash, opts: JSON.parse(hash.opts) as unknown } : hash;
    } else if (type === 'list') state[name] = await redis.lrange(key, 0, -1);
    else if (type === 'zset') state[name] = await redis.zrange(key, 0, -1, 'WITHSCORES');
    else if (type === 'string') state[name] = await redis.get(key);
    else if (type === 'stream') {
      state[name] = (await redis.xrange(key, '-', '+')).map(([, fields]) => fields);
    } else state[name] = type;
  }
  return state;
}

const jobOpts = (id: string, more: JobsOptions = {}): JobsOptions & { jobId: string } => ({
  jobId: id,
  attempts: 3,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: true,
  removeOnFail: true,
  ...more,
});

describe(`the BullMQ adapter, verified on BullMQ ${BULLMQ_VERIFIED_VERSION}`, () => {
  it('runs on the BullMQ version it was verified against', () => {
    const pkg = JSON.parse(readFileSync(requireEngine.resolve('bullmq/package.json'), 'utf8')) as {
      version: string;
    };
    const pinned = (
      JSON.parse(readFileSync(resolve(root, 'packages/engine/package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      }
    ).dependencies.bullmq;
    const upgrade =
      `BullMQ changed: installed ${pkg.version}, engine pins ${String(pinned)}, the adapter ` +
      `(packages/engine/src/bullmq-adapter.ts) was verified on ${BULLMQ_VERIFIED_VERSION}. ` +
      'Run the rest of this file, fix what fails, then set BULLMQ_VERIFIED_VERSION.';
    expect(installedBullmqVersion(), upgrade).toBe(pkg.version);
    expect(pkg.version, upgrade).toBe(BULLMQ_VERIFIED_VERSION);
    expect(pinned, upgrade).toBe(BULLMQ_VERIFIED_VERSION);
  });

  it(`finds each add script in ${BULLMQ_SCRIPTS_MODULE}, with at most ADD_KEYS keys`, () => {
    const all = requireEngine(BULLMQ_SCRIPTS_MODULE) as Record<string, unknown>;
    const problems = addScriptProblems(all);
    expect(problems, `BullMQ's add scripts changed: ${problems.join('; ')}`).toEqual([]);
    expect(ADD_IN_CREATE).toBe(true);
    expect(BULLMQ_ADD_LUA).toContain('local function bullmq_add(');
    // The guard itself can refuse: a missing script, one taking too many keys.
    const { addDelayedJob: _gone, ...withoutDelayed } = all;
    expect(addScriptProblems(withoutDelayed)).toEqual([
      `addDelayedJob: not in ${BULLMQ_SCRIPTS_MODULE}`,
    ]);
    const wider = { ...all, addStandardJob: { name: 'addStandardJob', content: 'x', keys: 10 } };
    expect(addScriptProblems(wider)).toEqual([
      `addStandardJob: takes 10 keys, more than ADD_KEYS (${ADD_KEYS})`,
    ]);
  });

  it('captures a standard, prioritized and delayed add that Queue.getJob reads back', async () => {
    const cases = [
      { tag: 's', more: {}, state: 'waiting' },
      { tag: 'p', more: { priority: 4 }, state: 'prioritized' },
      { tag: 'd', more: { delay: 60_000 }, state: 'delayed' },
    ] as const;
    for (const { tag, more, state } of cases) {
      const queue = newQueue();
      const id = `job-${tag}`;
      const data = { tenant: 't', input: { n: 7, text: 'ü' } };
      const add = captureAdd(queue, 'echo', data, jobOpts(id, more));
      expect(add?.tag, `Job.addJob no longer sends one add command for a ${state} job`).toBe(tag);
      expect(add!.keys).toHaveLength(ADD_KEYS);
      expect(await runAdd(add!)).toBe(id);
      const job = await queue.getJob(id);
      expect(job?.name).toBe('echo');
      expect(job?.data).toEqual(data);
      expect(job?.opts).toMatchObject({
        attempts: 3,
        backoff: { type: 'exponential', delay: 500 },
        removeOnComplete: true,
        removeOnFail: true,
        ...more,
      });
      expect(await queue.getJobState(id)).toBe(state);
    }
  });

  it("writes by its quick add what BullMQ's own add scripts write, and leaves it the rest", async () => {
    const data = { tenant: 't', input: { n: 7, text: 'ü' } };
    const timestamp = 1_767_225_600_000;
    const cases: { name: string; opts: JobsOptions[]; priorities?: number[]; pause?: boolean }[] = [
      { name: 'standard', opts: [{}, {}] },
      { name: 'prioritized', opts: [{ priority: 4 }, { priority: 2 }] },
      {
        name: 'fair share',
        opts: [{ priority: FAIR_PRIORITY_PLACEHOLDER }, { priority: FAIR_PRIORITY_PLACEHOLDER }],
        priorities: [70_000, 3],
      },
      { name: 'paused queue', opts: [{}, { priority: 5 }], pause: true },
      { name: 'a job id taken', opts: [{}, {}] },
    ];
    // BullMQ's own add; the quick add on BullMQ's arguments (captureAdd); on quickAdd's.
    const ways = ['bullmq', 'quick on captureAdd', 'quick on quickAdd'] as const;
    for (const c of cases) {
      const states = [];
      for (const way of ways) {
        const queue = newQueue();
        if (c.pause) await queue.pause();
        // A queue that has had an add before: its meta, counters and events exist.
        await queue.add('echo', {}, { jobId: 'before', timestamp });
        await redis.del(queue.toKey('marker')); // taken by a worker meanwhile
        const adds = c.opts.map((more, i) => {
          const id = c.name === 'a job id taken' && i === 1 ? 'before' : `job-${i}`;
          const opts = jobOpts(id, { timestamp, ...more });
          return way === 'quick on quickAdd'
            ? quickAdd(queue, 'echo', data, opts)
            : captureAdd(queue, 'echo', data, opts);
        });
        if (way === 'quick on quickAdd') {
          expect(adds.map((a) => a?.tag)).toEqual(c.opts.map((o) => (o.priority ? 'P' : 'S')));
          const captured = captureAdd(queue, 'echo', data, jobOpts('x', c.opts[0]));
          expect(adds[0]!.keys, "quickAdd's keys are not BullMQ's").toEqual(captured!.keys);
        }
        const answers = await runAdds(adds as JobAdd[], way !== 'bullmq', c.priorities);
        if (way === 'quick on quickAdd') expect(answers, c.name).toEqual([1, 1]);
        if (way === 'quick on captureAdd' && c.name !== 'a job id taken') {
          expect(answers, `${c.name}: the quick add declined`).toEqual([1, 1]);
        }
        states.push(await queueState(queue));
      }
      expect(states[1], `${c.name}: the quick add wrote something else`).toEqual(states[0]);
      expect(states[2], `${c.name}: quickAdd's add wrote something else`).toEqual(states[0]);
    }
    // Declined, for BullMQ's own script to do: a delayed job, a job id already taken (BullMQ's
    // arguments); not built by quickAdd: a delay, an option it does not know, an integer id.
    const queue = newQueue();
    const delayed = captureAdd(queue, 'echo', data, jobOpts('later', { delay: 60_000 }));
    await queue.add('echo', {}, { jobId: 'taken' });
    const taken = captureAdd(queue, 'echo', data, jobOpts('taken'));
    expect(await runAdds([delayed!, taken!], true)).toEqual([0, 0]);
    expect(await redis.hget(queueKeys(queue).job('taken'), 'data')).toBe('{}');
    for (const more of [{ delay: 60_000 }, { lifo: true }, { priority: 1.5 }, { priority: 0 }]) {
      expect(quickAdd(queue, 'echo', data, jobOpts('j', more)), JSON.stringify(more)).toBe(
        undefined,
      );
    }
    expect(quickAdd(queue, 'echo', data, jobOpts('42'))).toBe(undefined);
    expect(quickAdd(queue, 'echo', data, jobOpts('a:b'))).toBe(undefined);
  });

  it('finds the fair placeholder in packed options and patches it in place to what getJob reports', async () => {
    const queue = newQueue();
    const add = captureAdd(
      queue,
      'echo',
      {},
      jobOpts('fair', { priority: FAIR_PRIORITY_PLACEHOLDER }),
    );
    const packed = Buffer.from(add!.args[2]);
    const at = packed.indexOf(FAIR_PLACEHOLDER_BYTES);
    expect(
      at,
      'BullMQ no longer packs the priority as msgpack uint32 (0xce)',
    ).toBeGreaterThanOrEqual(0);
    // In place: the same bytes but the four of the priority (70 000 = 0x00011170).
    const patched = await redis.callBuffer(
      'EVAL',
      `${SET_FAIR_PRIORITY_LUA}\nreturn set_fair_priority(ARGV[1], tonumber(ARGV[2]))`,
      0,
      packed,
      '70000',
    );
    const expected = Buffer.from(packed);
    expected.set([0x00, 0x01, 0x11, 0x70], at + FAIR_PLACEHOLDER_BYTES.length - 4);
    expect(Buffer.compare(patched as Buffer, expected)).toBe(0);
    expect(await runAdd(add!, 70_000)).toBe('fair');
    const job = await queue.getJob('fair');
    expect(job?.priority).toBe(70_000);
    expect(job?.opts.priority).toBe(70_000);
    expect(await queue.getJobState('fair')).toBe('prioritized');
  });

  it("scores a prioritized job priority × 2^32 + a counter, and keeps its priority in the job's hash", async () => {
    const queue = newQueue();
    const keys = queueKeys(queue);
    await queue.add('echo', {}, { jobId: 'a', priority: 3 });
    await queue.add('echo', {}, { jobId: 'b', priority: 5 });
    const [a, b] = await Promise.all(['a', 'b'].map((id) => redis.zscore(keys.prioritized, id)));
    expect(PRIORITY_SCORE_SHIFT).toBe(2 ** 32);
    expect(prioritizedPriority(a!)).toBe(3);
    expect(prioritizedPriority(b!)).toBe(5);
    const counter = (score: string, p: number) => Number(score) - p * PRIORITY_SCORE_SHIFT;
    expect(counter(a!, 3)).toBeGreaterThanOrEqual(1);
    expect(counter(b!, 5)).toBe(counter(a!, 3) + 1);
    // The fair-share Lua (decision 53) moves a queued job to another priority in place: the set's
    // score keeps the counter, the job's hash its priority. BullMQ must read both back so.
    const moved = (await redis.eval(
      `${BULLMQ_PRIORITIZED_LUA}
       bullmq_reprioritize(KEYS[1], ARGV[1], tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1])), 9)
       return {tostring(BULLMQ_P32), tostring(BULLMQ_MAX_PRIORITY), redis.call('ZSCORE', KEYS[1], ARGV[1])}`,
      1,
      keys.prioritized,
      'a',
    )) as [string, string, string];
    expect(Number(moved[0])).toBe(PRIORITY_SCORE_SHIFT);
    expect(Number(moved[1])).toBe(BULLMQ_MAX_PRIORITY);
    expect(prioritizedPriority(moved[2])).toBe(9);
    expect(counter(moved[2], 9)).toBe(counter(a!, 3));
    expect((await queue.getJob('a'))?.priority).toBe(9);
    // b (5) now comes before a (9) in BullMQ's own order
    expect((await queue.getJobs(['prioritized'], 0, -1, true)).map((j) => j.id)).toEqual([
      'b',
      'a',
    ]);
    // and BULLMQ_MAX_PRIORITY is BullMQ's own ceiling: it accepts it, and refuses one more
    await queue.add('echo', {}, { jobId: 'max', priority: BULLMQ_MAX_PRIORITY });
    await expect(
      queue.add('echo', {}, { jobId: 'over', priority: BULLMQ_MAX_PRIORITY + 1 }),
    ).rejects.toThrow(/priority/i);
  });

  it('scores a delayed job by its due time, which delayedDueAt decodes', async () => {
    const queue = newQueue();
    const job = await queue.add('echo', {}, { jobId: 'later', delay: 45_000 });
    const score = await redis.zscore(queueKeys(queue).delayed, 'later');
    expect(score, 'the delayed job is not in queueKeys(queue).delayed').not.toBeNull();
    expect(delayedDueAt(score!)).toBe(job.timestamp + 45_000);
  });

  it("names a queue's keys as BullMQ's public adds use them", async () => {
    const queue = newQueue();
    const keys = queueKeys(queue);
    expect(keys).toMatchObject({
      prioritized: queue.toKey('prioritized'),
      delayed: queue.toKey('delayed'),
      wait: queue.toKey('wait'),
    });
    expect(keys.job('x')).toBe(queue.toKey('x'));
    await queue.add('echo', { n: 1 }, { jobId: 'plain' });
    expect(await redis.lrange(keys.wait, 0, -1)).toEqual(['plain']);
    expect(await redis.hget(keys.job('plain'), 'data')).toBe(JSON.stringify({ n: 1 }));
    await queue.add('echo', {}, { jobId: 'prio', priority: 2 });
    expect(await redis.zscore(keys.prioritized, 'prio')).not.toBeNull();
  });
});

describe("without BullMQ's add scripts (the adapter's fallback to Queue.add)", () => {
  it('a submit still stores its task, adds its job after the create, and runs to completion', async () => {
    const prefix = uniquePrefix();
    await registerTypes(redis, prefix);
    // On Node whatever the suite's runtime: the preload hides BullMQ's scripts from the engine.
    const api = await startApiProcess(
      { add: (stop) => cleanup.push(async () => stop()) },
      {
        REDIS_URL: inject('redisUrl'),
        LONGRUN_PREFIX: prefix,
        LONGRUN_API_KEYS: API_KEYS,
        NODE_OPTIONS: `--import=${resolve(root, 'bench/experiments/bullmq-public-add.mjs')}`,
      },
      { node: process.execPath },
    );
    const http = httpClient(api.url, KEY_A);
    // The first submit may load the scripts (EVALSHA, NOSCRIPT, EVAL): the second is counted.
    const first = await http('POST', '/v1/jobs', { body: { type: 'echo', input: { n: 0 } } });
    expect(first.status, first.text).toBe(202);
    const monitor = await redis.duplicate().monitor();
    cleanup.push(async () => monitor.disconnect());
    const scripts: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (/^eval/i.test(args[0] ?? '') && args.some((a) => a.includes(prefix))) scripts.push(args);
    });
    const res = await http('POST', '/v1/jobs', { body: { type: 'echo', input: { n: 1 } } });
    expect(res.status, res.text).toBe(202);
    const id = res.body.taskId as string;
    await new Promise((r) => setTimeout(r, 200));
    // Two script calls: the create, then BullMQ's own add (Queue.add), not one.
    expect(scripts.map((a) => a.slice(0, 3).join(' '))).toHaveLength(2);
    const worker = await startWorker(prefix);
    cleanup.push(() => worker.stop());
    const done = await waitFor(
      async () => {
        const handle = await http('GET', `/v1/jobs/${id}`);
        return handle.body?.status === 'completed' ? handle : undefined;
      },
      { what: `${id} completed` },
    );
    expect(done.body.result).toEqual({ n: 1 });
  });
});
