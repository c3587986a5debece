// The ceiling for the longrun worker: a raw BullMQ Worker whose processor returns its input.
// Prints {"msg":"raw worker ready"} once connected.
//
//   REDIS_URL=redis://127.0.0.1:6379 BENCH_PREFIX=p BENCH_QUEUE=raw BENCH_CONCURRENCY=100 \
//     node bench/raw-worker.mjs
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';

const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
  maxRetriesPerRequest: null,
});
const worker = new Worker(process.env.BENCH_QUEUE ?? 'raw', async (job) => job.data, {
  connection,
  prefix: process.env.BENCH_PREFIX ?? 'bull',
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? 100),
});
worker.on('error', (err) =>
  console.error(JSON.stringify({ msg: 'worker error', err: err.message })),
);
await worker.waitUntilReady();
console.log(JSON.stringify({ msg: 'raw worker ready' }));

const stop = async () => {
  await worker.close();
  await connection.quit();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
