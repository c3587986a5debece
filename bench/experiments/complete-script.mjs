// Redis time of a worker's completions per task (INFO commandstats: the script's µs, and the
// redis-server's own CPU), on a private redis-server: tasks are created as the API creates them
// (a storage budget, so their bytes are tracked), then completed by `TaskStore.completeMany` in
// calls of --batch, as a worker's CompletionBatch sends them.
//   node bench/experiments/complete-script.mjs [--tasks=8000] [--batch=25] [--rounds=3]
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { TaskStore } from '@longrun/engine/internal';
import { cleanupAll } from '../lib/children.mjs';
import { newRecord } from '../lib/create-items.mjs';
import { commandStats, connect, startPrivateRedis, redisCpuUs } from '../lib/redis.mjs';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '8000' },
    batch: { type: 'string', default: '25' },
    rounds: { type: 'string', default: '3' },
  },
});
const TASKS = Number(values.tasks);
const BATCH = Number(values.batch);
const input = { message: 'hello from the benchmark', n: 42, tags: ['a', 'b'] };

const redisInfo = await startPrivateRedis();
const redis = connect(redisInfo.url);
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    const prefix = `cm-${randomUUID().slice(0, 8)}`;
    const store = new TaskStore(redis, prefix, 86_400_000);
    const ids = [];
    for (let done = 0; done < TASKS; done += 100) {
      const items = [];
      for (let i = 0; i < 100; i++) {
        const now = Date.now();
        const record = newRecord('bench', input, now);
        ids.push(record.id);
        items.push({ record, maxOpenTasks: 0, maxBytes: 256 * 1024 * 1024 });
      }
      await store.createMany(items);
    }
    const before = await commandStats(redis);
    const cpuBefore = await redisCpuUs(redis);
    for (let i = 0; i < ids.length; i += BATCH) {
      const out = await store.completeMany(
        ids.slice(i, i + BATCH).map((id) => ({ id, json: JSON.stringify(input) })),
      );
      if (!out.every((o) => o.ok)) throw new Error(JSON.stringify(out[0]));
    }
    const cpuAfter = await redisCpuUs(redis);
    const after = await commandStats(redis);
    const script = (after.evalsha?.usec ?? 0) - (before.evalsha?.usec ?? 0);
    const rows = Object.entries(after)
      .map(([cmd, s]) => [
        cmd,
        (s.calls - (before[cmd]?.calls ?? 0)) / TASKS,
        (s.usec - (before[cmd]?.usec ?? 0)) / TASKS,
      ])
      .filter(([cmd, calls]) => calls > 0 && !['info', 'evalsha', 'eval'].includes(cmd))
      .sort((a, b) => b[2] - a[2]);
    console.log(
      `round ${round + 1}: script ${(script / TASKS).toFixed(1)} us, Redis CPU ${((cpuAfter - cpuBefore) / TASKS).toFixed(1)} us per completion; ${rows.map(([c, n, u]) => `${c} ${n.toFixed(2)}x ${u.toFixed(2)}us`).join(', ')}`,
    );
  }
} finally {
  await redis.quit();
  await cleanupAll();
}
