// Redis time of the create script per task (INFO commandstats: the script's µs, and the
// redis-server's own CPU), on a private redis-server, each part of a create left out in turn to
// price it: `node bench/experiments/create-script.mjs [--tasks=N] [--batch=8] [--rounds=3]
// [--only=<part of a name>]`. "as the API submits" is what a default API does (an open-task cap,
// a storage budget, fair share, the job added by the create); the rest are not products.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { TaskQueue, TaskStore } from '@longrun/engine/internal';
import { cleanupAll } from '../lib/children.mjs';
import { apiItem, newRecord } from '../lib/create-items.mjs';
import { commandStats, connect, startPrivateRedis, redisCpuUs } from '../lib/redis.mjs';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '8000' },
    batch: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    only: { type: 'string' },
    commands: { type: 'boolean', default: false },
  },
});
const TASKS = Number(values.tasks);
const BATCH = Number(values.batch);
const input = { message: 'hello from the benchmark', n: 42, tags: ['a', 'b'] };
const CAP = 10_000;
const BUDGET = 256 * 1024 * 1024;

const variants = {
  'as the API submits (cap, budget, fair, job)': {
    cap: CAP,
    budget: BUDGET,
    fair: true,
    job: true,
  },
  'no storage budget': { cap: CAP, budget: 0, fair: true, job: true },
  'no open-task cap': { cap: 0, budget: BUDGET, fair: true, job: true },
  'no fair share (standard add)': { cap: CAP, budget: BUDGET, fair: false, job: true },
  'no job (create only)': { cap: CAP, budget: BUDGET, fair: true, job: false },
  'bare create (no cap, budget, fair share, job)': { cap: 0, budget: 0, fair: false, job: false },
  // The adapter's fallback (decision 59): the create, then the job by Queue.add with its priority.
  'create then Queue.add (fallback)': {
    cap: CAP,
    budget: BUDGET,
    fair: true,
    job: false,
    addAfter: true,
  },
  "Queue.add alone (standard, the proxy's add)": { raw: true },
};

const redisInfo = await startPrivateRedis();
const redis = connect(redisInfo.url);
const results = {};
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [name, v] of Object.entries(variants)) {
      if (values.only && !name.includes(values.only)) continue;
      const prefix = `cs-${randomUUID().slice(0, 8)}`;
      const store = new TaskStore(redis, prefix, 86_400_000);
      const jobs = new TaskQueue({ connection: redis, prefix, types: new Map() });
      const queue = jobs.queueFor('echo');
      await queue.waitUntilReady();
      const before = await commandStats(redis);
      const cpuBefore = await redisCpuUs(redis);
      if (v.raw) {
        for (let done = 0; done < TASKS; done += BATCH) {
          const adds = [];
          for (let i = 0; i < BATCH; i++)
            adds.push(queue.add('echo', input, { jobId: randomUUID() }));
          await Promise.all(adds);
        }
      }
      for (let done = v.raw ? TASKS : 0; done < TASKS; done += BATCH) {
        const items = [];
        for (let i = 0; i < BATCH; i++) {
          const now = Date.now();
          const record = newRecord(`t${i % 3}`, input, now);
          items.push(apiItem(store, jobs, queue, record, v));
        }
        const out = await store.createMany(items);
        if (!out.every((o) => o.created)) throw new Error(JSON.stringify(out[0]));
        if (v.addAfter) {
          await Promise.all(
            items.map(({ record }, i) =>
              jobs.enqueue(record, { name: 'echo' }, { priority: out[i].priority }),
            ),
          );
        }
      }
      const cpuAfter = await redisCpuUs(redis);
      const after = await commandStats(redis);
      let us = 0;
      for (const cmd of ['evalsha', 'eval'])
        us += (after[cmd]?.usec ?? 0) - (before[cmd]?.usec ?? 0);
      (results[name] ??= []).push([us / TASKS, (cpuAfter - cpuBefore) / TASKS]);
      if (values.commands) {
        // --commands: each command's calls and µs per task (inside the scripts too).
        const rows = Object.entries(after)
          .map(([cmd, s]) => [
            cmd,
            (s.calls - (before[cmd]?.calls ?? 0)) / TASKS,
            (s.usec - (before[cmd]?.usec ?? 0)) / TASKS,
          ])
          .filter(
            ([cmd, calls]) => calls > 0 && !['info', 'evalsha', 'eval', 'flushall'].includes(cmd),
          )
          .sort((a, b) => b[2] - a[2]);
        console.log(
          `${name}: ${rows.map(([c, n, u]) => `${c} ${n.toFixed(2)}× ${u.toFixed(1)}µs`).join(', ')}`,
        );
      }
      await queue.close();
      await redis.flushall();
    }
  }
  for (const [name, xs] of Object.entries(results)) {
    const med = (k) => [...xs].map((x) => x[k]).sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(
      `${name.padEnd(48)} script ${med(0).toFixed(1).padStart(5)} µs · redis CPU ${med(1).toFixed(1).padStart(5)} µs per task (medians of ${xs.length})`,
    );
  }
} finally {
  await redis.quit();
  await cleanupAll();
}
