// Redis bytes a task's create leaves under a storage budget (issue 28, round five): N echo tasks
// made as the API submits them (create-many calls of 8, budget, fair share, the job; no cap), on a
// private redis-server; per task the used_memory delta and, apart, MEMORY USAGE of the tenant's
// budget keys. Run it from each tree to compare (the tree's own engine is imported):
//   node bench/experiments/budget-memory.mjs [--tasks=20000]
import { parseArgs } from 'node:util';
import { TaskQueue, TaskStore } from '@longrun/engine/internal';
import { cleanupAll } from '../lib/children.mjs';
import { apiItem, newRecord } from '../lib/create-items.mjs';
import { connect, startPrivateRedis, usedMemory } from '../lib/redis.mjs';

const { values } = parseArgs({ options: { tasks: { type: 'string', default: '20000' } } });
const TASKS = Number(values.tasks);
const BATCH = 8;
const input = { message: 'hello from the benchmark', n: 42, tags: ['a', 'b'] };
const redisInfo = await startPrivateRedis();
const redis = connect(redisInfo.url);
const settled = async () => {
  await new Promise((r) => setTimeout(r, 500));
  return usedMemory(redis);
};
try {
  const prefix = 'bm';
  const store = new TaskStore(redis, prefix, 86_400_000);
  const jobs = new TaskQueue({ connection: redis, prefix, types: new Map() });
  const queue = jobs.queueFor('echo');
  await queue.waitUntilReady();
  const before = await settled();
  for (let done = 0; done < TASKS; done += BATCH) {
    const now = Date.now();
    const items = Array.from({ length: BATCH }, () =>
      apiItem(store, jobs, queue, newRecord('t', input, now), { cap: 0 }),
    );
    await store.createMany(items);
  }
  const after = await settled();
  const usageKey = store.keys.usage('t');
  const budgetBytes =
    Number(await redis.memory('USAGE', usageKey, 'SAMPLES', '0')) +
    Number(await redis.memory('USAGE', `${usageKey}-exp`, 'SAMPLES', '0'));
  console.log(
    `${TASKS} tasks: ${((after - before) / TASKS).toFixed(0)} B of used_memory per task; ` +
      `the budget's keys ${(budgetBytes / TASKS).toFixed(1)} B per task ` +
      `(${await redis.hlen(usageKey)} hash fields, ${await redis.zcard(`${usageKey}-exp`)} expiry entries)`,
  );
} finally {
  redis.disconnect();
  await cleanupAll();
}
