import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobTypeDirectory } from '../registry/job-type-directory.js';
import { shardPrefix } from '../shards.js';
import type { TaskStore } from '../task-store.js';
import type { TaskWorkerLogger } from '../worker/job-data.js';
import { LeasePuller } from './lease-puller.js';

export { waitForJob } from './lease-puller.js';

/**
 * The puller of `queue` in `shard`, as the broker makes it: the type's rate limit, the lease as
 * its lock, and a job BullMQ fails on its own (its lease lapsed too often) recorded as lost.
 */
export function makePuller(
  opts: {
    workerConnection: Redis;
    prefix: string;
    leaseMs: number;
    types: JobTypeDirectory;
    logger: TaskWorkerLogger;
  },
  shard: number,
  queue: string,
  store: TaskStore,
): LeasePuller {
  const rateLimit = [...opts.types.values()].find(
    (t) => t.queueName === queue && t.rateLimit,
  )?.rateLimit;
  return new LeasePuller({
    connection: opts.workerConnection,
    prefix: shardPrefix(opts.prefix, shard),
    queue,
    leaseMs: opts.leaseMs,
    rateLimit,
    onLost: (job, err) => {
      // BullMQ failed it on its own: its lease lapsed more often than allowed.
      void store
        .transition(job.id ?? '', 'jobLost', {
          error: {
            message: `Worker lost the job too many times: ${err.message}`,
            code: 'job-lost',
          },
        })
        .catch((error: unknown) =>
          opts.logger.error({ err: error, taskId: job.id }, 'could not record a lost job'),
        );
    },
    onError: (err) => opts.logger.warn({ err, queue }, 'lease queue error'),
  });
}

/**
 * Takes what is waiting now, round `pullers` from a different one each call (`turn`), until
 * `leases` holds `max`: the takes from one puller go out together (one write, one round trip
 * for all of them), and each is `open`ed (leased, or given back).
 */
export async function fillFrom(
  pullers: readonly LeasePuller[],
  turn: number,
  max: number,
  leases: readonly unknown[],
  open: (job: Job, token: string, puller: LeasePuller) => Promise<void>,
): Promise<void> {
  const first = turn % pullers.length;
  for (let i = 0; i < pullers.length && leases.length < max; i++) {
    const puller = pullers[(first + i) % pullers.length]!;
    for (let rounds = 0; rounds < 3 && leases.length < max; rounds++) {
      const wanted = max - leases.length;
      const taken = await Promise.all(Array.from({ length: wanted }, () => puller.takeNow()));
      const got = taken.filter((t) => t !== undefined);
      await Promise.all(got.map((t) => open(t.job, t.token, puller)));
      if (got.length < wanted) break; // this queue has no more now
    }
  }
}
