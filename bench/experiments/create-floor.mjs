// How low could a create's Redis cost go (issue 28)? Scripts that write only what a submit must
// store, each a step closer to what longrun stores today, priced like create-script.mjs (Redis
// CPU and script time per task, batches of 8 tasks a call, a private redis-server), against
// BullMQ's own `Queue.add` (the proxy's add) and today's create-many:
//   node bench/experiments/create-floor.mjs [--tasks=12000] [--rounds=2]
// The floor scripts are not a product: they store a BullMQ-shaped job hash that also holds the
// record's fields (the one-hash layout decision 60 names), with no validation, budget or fair
// share, so they bound from below what any such layout could cost.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { TaskQueue, TaskStore } from '@longrun/engine/internal';
import { cleanupAll } from '../lib/children.mjs';
import { apiItem, newRecord } from '../lib/create-items.mjs';
import { connect, startPrivateRedis, redisCpuUs } from '../lib/redis.mjs';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '12000' },
    rounds: { type: 'string', default: '2' },
  },
});
const TASKS = Number(values.tasks);
const BATCH = 8;
const input = { message: 'hello from the benchmark', n: 42, tags: ['a', 'b'] };
const OPTS = JSON.stringify({
  attempts: 3,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: true,
  removeOnFail: true,
});

// KEYS: wait, marker, events, then per task: job, index, open. ARGV: now, then per task: id, data, expiresAt, member.
const floor = (steps) => `
local now = ARGV[1]
local n = (#ARGV - 1) / 4
for i = 1, n do
  local id, data, exp, member = ARGV[2 + (i-1)*4], ARGV[3 + (i-1)*4], ARGV[4 + (i-1)*4], ARGV[5 + (i-1)*4]
  local job, index, open = KEYS[3 + (i-1)*3 + 1], KEYS[3 + (i-1)*3 + 2], KEYS[3 + (i-1)*3 + 3]
  redis.call('HSET', job, 'name', 'echo', 'data', data, 'opts', '${OPTS.replace(/"/g, '\\"')}', 'timestamp', now, 'delay', 0, 'priority', 0,
    'status', 'working', 'msg', 'queued', 'created', now, 'updated', now, 'ttl', 86400000, 'type', 'echo', 'tenant', 't')
  redis.call('LPUSH', KEYS[1], id)
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', 10000, '*', 'event', 'waiting', 'jobId', id)
  ${steps.includes('expiry') ? "redis.call('PEXPIREAT', job, exp)" : ''}
  ${steps.includes('index') ? "redis.call('ZADD', index, 0, member)" : ''}
  ${steps.includes('open') ? "redis.call('ZADD', open, exp, id)" : ''}
end
redis.call('ZADD', KEYS[2], 0, '0')
return n`;

const variants = {
  'floor: one hash (job + record), list, one event': floor([]),
  '+ its expiry': floor(['expiry']),
  '+ the tenant index': floor(['expiry', 'index']),
  '+ the open set': floor(['expiry', 'index', 'open']),
  'create-many as the API submits (today)': 'createMany',
  "Queue.add alone (the proxy's add)": 'add',
};

const redisInfo = await startPrivateRedis();
const redis = connect(redisInfo.url);
const results = {};
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [name, v] of Object.entries(variants)) {
      const prefix = `cf-${randomUUID().slice(0, 8)}`;
      const store = new TaskStore(redis, prefix, 86_400_000);
      const jobs = new TaskQueue({ connection: redis, prefix, types: new Map() });
      const queue = jobs.queueFor('echo');
      await queue.waitUntilReady();
      const sha =
        typeof v === 'string' && v.startsWith('\n') ? await redis.script('LOAD', v) : null;
      const cpuBefore = await redisCpuUs(redis);
      for (let done = 0; done < TASKS; done += BATCH) {
        const now = Date.now();
        if (v === 'add') {
          await Promise.all(
            Array.from({ length: BATCH }, () => queue.add('echo', input, { jobId: randomUUID() })),
          );
        } else if (v === 'createMany') {
          const items = Array.from({ length: BATCH }, (_, i) =>
            apiItem(store, jobs, queue, newRecord(`t${i % 3}`, input, now)),
          );
          await store.createMany(items);
        } else {
          const keys = [`${prefix}:echo:wait`, `${prefix}:echo:marker`, `${prefix}:echo:events`];
          const argv = [String(now)];
          for (let i = 0; i < BATCH; i++) {
            const id = randomUUID();
            keys.push(
              `${prefix}:echo:${id}`,
              `${prefix}:index:t${i % 3}`,
              `${prefix}:open:t${i % 3}`,
            );
            argv.push(
              id,
              JSON.stringify({ tenant: `t${i % 3}`, input }),
              String(now + 86_400_000),
              `${String(now).padStart(15, '0')}:${id}`,
            );
          }
          await redis.evalsha(sha, keys.length, ...keys, ...argv);
        }
      }
      const cpu = (await redisCpuUs(redis)) - cpuBefore;
      (results[name] ??= []).push(cpu / TASKS);
    }
  }
} finally {
  redis.disconnect();
  await cleanupAll();
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const add = median(results["Queue.add alone (the proxy's add)"]);
for (const [name, xs] of Object.entries(results)) {
  const m = median(xs);
  console.log(
    `${name.padEnd(46)} Redis CPU ${m.toFixed(1).padStart(6)} µs per task  ${(m / add).toFixed(2)}x the add  (${xs.map((x) => x.toFixed(1)).join(' / ')})`,
  );
}
