// Figure 3: how fast workers drain a queue. Jobs are submitted while the queue is paused, then the
// queue is resumed and the time until nothing is waiting or active is measured.
import { performance } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import { waitFor } from './children.mjs';
import { C, ECHO_INPUT } from './config.mjs';
import { checkLoad, ctx, post, say, sum, warn } from './context.mjs';
import { withCpu } from './cpu.mjs';
import { monitorSample, tripsText } from './monitor.mjs';
import { num } from './report.mjs';
import { load, processed, rawAdd, startRawWorker, startWorker } from './services.mjs';

/** Resolves once `queue` has nothing waiting, paused, active, prioritized or delayed. */
export function drained(queue) {
  return waitFor(
    async () => {
      const counts = await queue.getJobCounts('wait', 'paused', 'active', 'prioritized', 'delayed');
      return Object.values(counts).every((n) => n === 0);
    },
    { intervalMs: 10, timeoutMs: 300_000, what: `${queue.name} drained` },
  );
}

/**
 * The longrun worker (1, then 2 processes, then 1 at LOG_LEVEL=info) against a raw BullMQ worker.
 * Leaves the LOG_LEVEL=info worker and the raw worker running for the memory and cancel parts.
 */
export async function processFigures({ api, prefix, rawPrefix, trips }) {
  const { redis, redisUrl, redisPid } = ctx;
  // The echo jobs' queue: each job type has a queue of its own (decision 46).
  const tasksQ = new Queue('tasks.echo', { connection: redis, prefix });
  const rawQ = new Queue('raw', { connection: redis, prefix: rawPrefix });
  const raw = { redisUrl, prefix: rawPrefix, queue: 'raw' };
  const workersOn = (n) => async () => (await tasksQ.getWorkersCount()) >= n;
  const rawWorker = await startRawWorker(raw);
  const w1 = await startWorker('worker-1', { redisUrl, prefix, isReady: workersOn(1) });
  const cpuOf = async (pids, fn) => withCpu([...pids, redisPid].filter(Boolean), fn);
  const perJob = (cpu, n, jobs) => ({
    cpuUs: (sum(cpu.slice(0, n)) * 1e6) / jobs,
    redisUs: redisPid ? (cpu[n] * 1e6) / jobs : NaN,
  });

  const longrunRound = async (workers, jobs = C.processJobs) => {
    await tasksQ.pause();
    const sub = checkLoad('process: submit', await load(post(api, { amount: jobs })), '202');
    const done = async () =>
      sum(await Promise.all(workers.map((w) => processed(w, 'echo', 'completed'))));
    const before = await done();
    const t0 = performance.now();
    const { cpu } = await cpuOf(
      workers.map((w) => w.child.pid),
      async () => {
        await tasksQ.resume();
        await drained(tasksQ);
      },
    );
    const seconds = (performance.now() - t0) / 1000;
    const completed = (await done()) - before;
    if (completed !== sub.ok) warn(`process: ${sub.ok} submitted, ${completed} completed`);
    return {
      jobs: sub.ok,
      seconds,
      rate: sub.ok / seconds,
      ...perJob(cpu, workers.length, sub.ok),
    };
  };
  const rawRound = async (jobs = C.processJobs) => {
    await rawQ.pause();
    await rawAdd(raw, { count: jobs, inflight: 100, data: ECHO_INPUT });
    const t0 = performance.now();
    const { cpu } = await cpuOf([rawWorker.pid], async () => {
      await rawQ.resume();
      await drained(rawQ);
    });
    const seconds = (performance.now() - t0) / 1000;
    const failed = await rawQ.getFailedCount();
    if (failed > 0) warn(`raw worker: ${failed} failed jobs`);
    return { jobs, seconds, rate: jobs / seconds, ...perJob(cpu, 1, jobs) };
  };

  // A fresh process runs its first thousands of jobs before the JIT has compiled the hot paths:
  // each new set of workers drains a warm-up batch first, left out of the figures.
  const warmUp = C.processJobs / 4;
  await rawRound(warmUp);
  await longrunRound([w1], warmUp);
  const runs = { raw: [], one: [], two: [], four: [], oneInfo: [], rawInfo: [] };
  for (let i = 0; i < C.rounds; i++) {
    runs.raw.push(await rawRound());
    runs.one.push(await longrunRound([w1]));
    say(
      `process round ${i + 1}: raw ${num(runs.raw[i].rate)} jobs/s, longrun ×1 ${num(runs.one[i].rate)} jobs/s`,
    );
  }

  // Exact commands per job, longrun worker vs raw worker.
  await tasksQ.pause();
  await load(post(api, { amount: C.monitorSample, connections: 10 }));
  trips.longrunJob = await monitorSample(C.monitorSample, async () => {
    await tasksQ.resume();
    await drained(tasksQ);
  });
  await rawQ.pause();
  await rawAdd(raw, { count: C.monitorSample, inflight: 100, data: ECHO_INPUT });
  trips.rawJob = await monitorSample(C.monitorSample, async () => {
    await rawQ.resume();
    await drained(rawQ);
  });
  say(`commands per job: longrun ${tripsText(trips.longrunJob)}; raw ${tripsText(trips.rawJob)}`);

  const w2 = await startWorker('worker-2', { redisUrl, prefix, isReady: workersOn(2) });
  await longrunRound([w1, w2], warmUp);
  for (let i = 0; i < C.rounds; i++) {
    runs.two.push(await longrunRound([w1, w2]));
    say(`process round ${i + 1}: longrun ×2 ${num(runs.two[i].rate)} jobs/s`);
  }
  // Four processes on this machine's cores: where the drain stops rising is the machine's (or
  // Redis') limit, not the workers'.
  const w3 = await startWorker('worker-3', { redisUrl, prefix, isReady: workersOn(3) });
  const w4 = await startWorker('worker-4', { redisUrl, prefix, isReady: workersOn(4) });
  await longrunRound([w1, w2, w3, w4], warmUp);
  for (let i = 0; i < C.rounds; i++) {
    runs.four.push(await longrunRound([w1, w2, w3, w4]));
    say(`process round ${i + 1}: longrun ×4 ${num(runs.four[i].rate)} jobs/s`);
  }
  await Promise.all([w4, w3, w2, w1].map((w) => w.child.stop()));

  // The default LOG_LEVEL=info, once, next to a raw round.
  const infoWorker = await startWorker('worker-info', { redisUrl, prefix, logLevel: 'info' });
  await longrunRound([infoWorker], warmUp);
  runs.rawInfo.push(await rawRound());
  runs.oneInfo.push(await longrunRound([infoWorker]));
  say(
    `process, LOG_LEVEL=info: longrun ×1 ${num(runs.oneInfo[0].rate)} jobs/s, raw ${num(runs.rawInfo[0].rate)} jobs/s`,
  );
  return { runs, tasksQ, rawQ, rawWorker, infoWorker };
}
