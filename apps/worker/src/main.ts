import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { ConfigError } from '@longrun/core';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  createRedis,
  TaskWorker,
  WebhookDispatcher,
  WebhookTargetPolicy,
} from '@longrun/queue';
import { loadConfig } from './config.js';
import { catalog } from './jobs/index.js';
import { WorkerMetrics } from './metrics.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = pino({ name: 'longrun-worker', level: config.LOG_LEVEL });
  const connection = createRedis(config.REDIS_URL, 'worker');
  const subscriber = createRedis(config.REDIS_URL, 'subscriber');
  const relayConnection = createRedis(config.REDIS_URL, 'worker');
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
    concurrency: config.LONGRUN_WORKER_CONCURRENCY,
    lockDurationMs: config.LONGRUN_LOCK_DURATION_MS,
    stalledIntervalMs: config.LONGRUN_STALLED_INTERVAL_MS,
    maxStalledCount: config.LONGRUN_MAX_STALLED_COUNT,
    logger,
    onRun: metrics.onRun,
    onActiveChange: metrics.onActiveChange,
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
  await worker.start();
  await webhooks.start();
  logger.info(
    {
      metricsPort: port,
      concurrency: config.LONGRUN_WORKER_CONCURRENCY,
      types: [...catalog.keys()],
    },
    'worker ready',
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, graceMs: config.LONGRUN_SHUTDOWN_GRACE_MS }, 'worker stopping');
    const closed = worker.close().then(() => true);
    const inTime = await Promise.race([closed, sleep(config.LONGRUN_SHUTDOWN_GRACE_MS, false)]);
    if (!inTime) {
      logger.warn('grace period over: releasing running jobs to stall recovery');
      await worker.close(true);
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

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error('worker failed to start:', error);
  process.exit(1);
});
