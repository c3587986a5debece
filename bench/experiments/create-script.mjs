// Redis time of the create script per task (INFO commandstats, evalsha), on a private
// redis-server: `node bench/experiments/create-script.mjs [--tasks=N] [--batch=16]`.
// Variants are the script with one part left out, to price each part; none is a product.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { TaskQueue, TaskStore } from '@longrun/engine/internal';
import { CREATE_MANY } from '../../packages/engine/dist/scripts.js';
import { cleanupAll } from '../lib/children.mjs';
import { commandStats, connect, startPrivateRedis } from '../lib/redis.mjs';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '8000' },
    batch: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
    only: { type: 'string' },
  },
});
const TASKS = Number(values.tasks);
const BATCH = Number(values.batch);
const input = { message: 'hello from the benchmark', n: 42, tags: ['a', 'b'] };

const variants = {
  'as shipped (fair share, prioritized add)': { fair: true, job: true },
  'no fair share (standard add)': { fair: false, job: true },
  'create only, fair share': { fair: true, job: false },
  'create only, no fair share': { fair: false, job: false },
  'fair share, priority not set (the placeholder stays)': {
    fair: true,
    job: true,
    lua: (l) =>
      l.replace(
        'if priority then opts = set_fair_priority',
        'if false then opts = set_fair_priority',
      ),
  },
  'fair share, options unpacked and repacked (before)': {
    fair: true,
    job: true,
    lua: (l) =>
      l.replace(
        'local at = string.find(opts, FAIR_PLACEHOLDER',
        'local at = nil and string.find(opts, FAIR_PLACEHOLDER',
      ),
  },
  "Queue.add alone (standard, the proxy's add)": { raw: true },
  // The adapter's fallback (decision 59): the create, then the job by Queue.add with its priority.
  'fair share, create then Queue.add (fallback)': { fair: true, job: false, addAfter: true },
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
      if (v.lua) {
        const lua = v.lua(CREATE_MANY);
        if (lua === CREATE_MANY) throw new Error(`${name}: the patch did not apply`);
        redis.defineCommand('longrunCreateMany', { lua });
      }
      const jobs = new TaskQueue({ connection: redis, prefix, types: new Map() });
      const queue = jobs.queueFor('echo');
      const before = await commandStats(redis);
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
          const record = {
            id: randomUUID(),
            tenant: `t${i % 3}`,
            type: 'echo',
            status: 'working',
            statusMessage: 'queued',
            createdAt: now,
            updatedAt: now,
            ttlMs: 86_400_000,
            input,
            cancelRequested: false,
            awaitingInput: false,
            inputs: [],
          };
          const fair = v.fair
            ? {
                key: store.keys.fairShare(queue.name),
                head: queue.toKey('prioritized'),
                step: 1,
                offset: 0,
              }
            : undefined;
          const job = v.job
            ? jobs.prepare(record, { name: 'echo' }, { fairShare: v.fair && !v.standard })
            : undefined;
          items.push({ record, fair, job });
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
      const after = await commandStats(redis);
      const us = (after.evalsha?.usec ?? 0) - (before.evalsha?.usec ?? 0);
      (results[name] ??= []).push(us / TASKS);
      if (v.lua) redis.defineCommand('longrunCreateMany', { lua: CREATE_MANY });
      await redis.flushall();
    }
  }
  for (const [name, xs] of Object.entries(results)) {
    const sorted = [...xs].sort((a, b) => a - b);
    console.log(
      `${name.padEnd(45)} ${sorted.map((x) => x.toFixed(1)).join(' / ')} µs per task (median ${sorted[Math.floor(sorted.length / 2)].toFixed(1)})`,
    );
  }
} finally {
  await redis.quit();
  await cleanupAll();
}
