// The ceiling for submits: raw BullMQ `queue.add` with a fixed number of adds in flight, with the
// job options longrun's enqueue uses (own job id, one attempt, removed when finished).
// Prints one JSON line {adds, seconds, rate}.
//
//   REDIS_URL=… BENCH_PREFIX=p BENCH_QUEUE=raw node bench/raw-add.mjs '{"count":20000,"inflight":100}'
// Options: count, inflight, data (the job data), keep (true: removeOnComplete false).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

const options = JSON.parse(process.argv[2] ?? '{}');
const count = options.count ?? 20_000;
const inflight = options.inflight ?? 100;
const data = options.data ?? { tenant: 'bench' };
const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
});
await new Promise((resolve) => connection.once('ready', resolve));
const queue = new Queue(process.env.BENCH_QUEUE ?? 'raw', {
  connection,
  prefix: process.env.BENCH_PREFIX ?? 'bull',
});
const opts = { attempts: 1, removeOnComplete: !options.keep, removeOnFail: !options.keep };

let next = 0;
const started = performance.now();
const lane = async () => {
  while (next < count) {
    next += 1;
    await queue.add('echo', data, { ...opts, jobId: randomUUID() });
  }
};
await Promise.all(Array.from({ length: Math.min(inflight, count) }, lane));
const seconds = (performance.now() - started) / 1000;
console.log(JSON.stringify({ adds: count, seconds, rate: count / seconds }));
await queue.close();
await connection.quit();
