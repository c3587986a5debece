import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { ConfigError } from '@longrun/core';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  createRedis,
  queueNameFor,
  Reconciler,
  TaskWorker,
  WebhookDispatcher,
  WebhookTargetPolicy,
} from '@longrun/engine';
import { loadConfig } from './config.js';
import { catalog } from './jobs/index.js';
import { WorkerMetrics } from './metrics.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = pino({ name: 'longrun-worker', level: config.LOG_LEVEL });
  const cluster = { clusterNodes: config.LONGRUN_REDIS_CLUSTER_NODES };
  const connection = createRedis(config.REDIS_URL, 'worker', cluster);
  const subscriber = createRedis(config.REDIS_URL, 'subscriber', cluster);
  const relayConnection = createRedis(config.REDIS_URL, 'worker', cluster);
  for (const conn of [connection, subscriber, relayConnection]) {
    conn.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error'));
  }
  const metrics = new WorkerMetrics(config.LONGRUN_WORKER_CONCURRENCY);
  const worker = new TaskWorker({
    connection,
    subscriber,
    prefix: config.LONGRUN_PREFIX,
    maxTtlMs: config.LONGRUN_MAX_TTL_MS,
    catalog,
    types: config.LONGRUN_WORKER_TYPES,
    concurrency: config.LONGRUN_WORKER_CONCURRENCY,
    lockDurationMs: config.LONGRUN_LOCK_DURATION_MS,
    stalledIntervalMs: config.LONGRUN_STALLED_INTERVAL_MS,
    maxStalledCount: config.LONGRUN_MAX_STALLED_COUNT,
    runningMarkMs: config.LONGRUN_RUNNING_MARK_MS,
    logger,
    onRun: metrics.onRun,
    onActiveChange: metrics.onActiveChange,
    crashAt: config.LONGRUN_TEST_CRASH_AT,
  });
  const reconciler = new Reconciler({
    connection,
    prefix: config.LONGRUN_PREFIX,
    catalog,
    maxTtlMs: config.LONGRUN_MAX_TTL_MS,
    intervalMs: config.LONGRUN_RECONCILE_INTERVAL_MS,
    graceMs: config.LONGRUN_RECONCILE_GRACE_MS,
    batch: config.LONGRUN_RECONCILE_BATCH,
    logger,
    onRepair: metrics.onRepair,
  });
  const webhooks = new WebhookDispatcher({
    connection,
    relayConnection,
    prefix: config.LONGRUN_PREFIX,
    maxTtlMs: config.LONGRUN_MAX_TTL_MS,
    pollIntervalMs: config.LONGRUN_POLL_INTERVAL_MS,
    policy: new WebhookTargetPolicy(config.LONGRUN_WEBHOOK_ALLOW),
    logger,
    consumerName: `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    onDelivery: metrics.onDelivery,
  });
  const { server, port } = await metrics.listen(
    config.LONGRUN_METRICS_PORT,
    config.LONGRUN_METRICS_HOST,
  );
  await applyTypeConcurrency(connection, config.LONGRUN_PREFIX, config.LONGRUN_TYPE_CONCURRENCY);
  await worker.start();
  await webhooks.start();
  if (config.LONGRUN_RECONCILE_INTERVAL_MS > 0) reconciler.start();
  logger.info(
    {
      metricsPort: port,
      concurrency: config.LONGRUN_WORKER_CONCURRENCY,
      types: config.LONGRUN_WORKER_TYPES ?? [...catalog.keys()],
      queues: worker.queueNames,
    },
    'worker ready',
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, graceMs: config.LONGRUN_SHUTDOWN_GRACE_MS }, 'worker stopping');
    // Whatever happens (Redis gone, a handler that never yields), the process ends.
    setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.LONGRUN_SHUTDOWN_GRACE_MS + 5000).unref();
    await reconciler.stop().catch(() => undefined);
    const closed = worker.close().then(() => true);
    const inTime = await Promise.race([closed, sleep(config.LONGRUN_SHUTDOWN_GRACE_MS, false)]);
    if (!inTime) {
      // Leave without finishing: the jobs' locks expire and another worker runs them again (the
      // same path as a crash), rather than completing or failing work that did not finish.
      logger.warn('grace period over: leaving running jobs to stall recovery');
      server.close();
      for (const conn of [connection, subscriber, relayConnection]) conn.disconnect();
      process.exit(0);
    }
    await webhooks.close().catch(() => undefined);
    server.close();
    await Promise.allSettled([connection.quit(), subscriber.quit(), relayConnection.quit()]);
    logger.info('worker stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/** Stores fleet-wide concurrency caps on the job types' queues (BullMQ global concurrency). */
async function applyTypeConcurrency(
  connection: Redis,
  prefix: string,
  caps: ReadonlyMap<string, number>,
): Promise<void> {
  for (const [type, cap] of caps) {
    const definition = catalog.get(type);
    if (!definition)
      throw new ConfigError(`LONGRUN_TYPE_CONCURRENCY names unknown job type ${type}`);
    if (!definition.queue) {
      throw new ConfigError(
        `LONGRUN_TYPE_CONCURRENCY: ${type} shares the default queue; give it a queue of its own`,
      );
    }
    const queue = new Queue(queueNameFor(definition), { connection, prefix });
    await queue.setGlobalConcurrency(cap);
    await queue.close();
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error('worker failed to start:', error);
  process.exit(1);
});
