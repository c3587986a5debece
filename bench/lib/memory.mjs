// Figure 6: Redis bytes per retained completed task, longrun against raw BullMQ (same payload).
import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor } from './children.mjs';
import { C, ECHO_INPUT } from './config.mjs';
import { checkLoad, ctx, indexKey, post, sum, warn } from './context.mjs';
import { drained } from './processing.mjs';
import { usedMemory } from './redis.mjs';
import { load, processed, rawAdd } from './services.mjs';

/** used_memory once Redis had half a second to settle. */
async function settled() {
  await sleep(500);
  return usedMemory(ctx.redis);
}

/** MEMORY USAGE of a key, in bytes (exact: SAMPLES 0). */
async function usage(key) {
  return Number((await ctx.redis.memory('USAGE', key, 'SAMPLES', '0')) ?? 0);
}

async function average(keys) {
  return sum(await Promise.all(keys.map(usage))) / keys.length;
}

/**
 * longrun: tasks submitted through `api`, run by `worker`, kept until their ttl. Raw: jobs added
 * with `removeOnComplete: false`, run by the raw worker. Both: used_memory delta ÷ count, plus
 * MEMORY USAGE of the keys one task (job) leaves behind.
 */
export async function memoryFigures({ api, worker, prefix, rawPrefix, tasksQ, rawQ }) {
  const { redis } = ctx;
  const m0 = await settled();
  const before = await processed(worker, 'echo', 'completed');
  const sub = checkLoad('memory: submit', await load(post(api, { amount: C.memoryTasks })), '202');
  await waitFor(async () => (await processed(worker, 'echo', 'completed')) - before >= sub.ok, {
    timeoutMs: 120_000,
    intervalMs: 100,
    what: 'memory tasks completed',
  });
  await drained(tasksQ);
  const m1 = await settled();
  // Newest first: the tasks just made.
  const members = await redis.zrangebylex(indexKey(prefix), '-', '+', 'LIMIT', 0, 20);
  const ids = members.map((m) => m.slice(14));
  const sample = await redis.hgetall(`${prefix}:task:${ids[0]}`);
  if (sample.status !== 'completed')
    warn(`memory: sampled task is ${sample.status}, not completed`);
  const longrun = {
    tasks: sub.ok,
    perTask: (m1 - m0) / sub.ok,
    taskHash: await average(ids.map((id) => `${prefix}:task:${id}`)),
    eventsStream: await average(ids.map((id) => `${prefix}:events:${id}`)),
    indexEntry: (await usage(indexKey(prefix))) / (await redis.zcard(indexKey(prefix))),
    sampleFields: Object.keys(sample).length,
  };

  const r0 = await settled();
  const rawBefore = await rawQ.getCompletedCount();
  const raw = { redisUrl: ctx.redisUrl, prefix: rawPrefix, queue: 'raw' };
  await rawAdd(raw, { count: C.memoryTasks, inflight: 100, data: ECHO_INPUT, keep: true });
  await waitFor(async () => (await rawQ.getCompletedCount()) - rawBefore >= C.memoryTasks, {
    timeoutMs: 120_000,
    intervalMs: 100,
    what: 'raw memory jobs completed',
  });
  await drained(rawQ);
  const r1 = await settled();
  const jobs = await rawQ.getCompleted(0, 19);
  const completedKey = `${rawPrefix}:raw:completed`;
  return {
    longrun,
    raw: {
      jobs: C.memoryTasks,
      perJob: (r1 - r0) / C.memoryTasks,
      jobHash: await average(jobs.map((j) => `${rawPrefix}:raw:${j.id}`)),
      completedEntry: (await usage(completedKey)) / (await redis.zcard(completedKey)),
    },
  };
}
