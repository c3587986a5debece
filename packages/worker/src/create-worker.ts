import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { ConfigError, type JobCatalog } from '@longrun/core';
import {
  createLogger,
  coalesceWrites,
  FailureLog,
  createRedis,
  describeJobType,
  JobTypeDirectory,
  JobTypeRegistry,
  queueNameFor,
  Reconciler,
  ShardCount,
  shardPrefix,
  RegistryHeartbeat,
  RunSlots,
  TaskWorker,
  WebhookDispatcher,
  WebhookTargetPolicy,
  type JobTypeDescriptor,
} from '@longrun/engine';
import { WorkerMetrics } from './metrics.js';
import { checkOptions, type WorkerOptions } from './options.js';

/** A running (or ready to run) longrun worker. */
export interface LongrunWorker {
  /** This process's name in the registry and the webhook consumer group. */
  readonly id: string;
  /** The job types it runs and the BullMQ queues it consumes. */
  readonly types: readonly string[];
  readonly queueNames: readonly string[];
  /** What it publishes to the registry (name, version, input schema, queue, attempts). */
  readonly descriptors: readonly JobTypeDescriptor[];
  /** Its Prometheus metrics (served only with the `metrics` option; register them elsewhere). */
  readonly metrics: WorkerMetrics;
  /** How long `close()` waits for running handlers. */
  readonly shutdownGraceMs: number;
  /** The port `/metrics` is served on, once started with `metrics`. */
  readonly metricsPort: number | undefined;
  /** Registers the types, then starts taking jobs. */
  start(): Promise<void>;
  /**
   * Stops taking jobs and waits up to `shutdownGraceMs` for running ones; past it they are left
   * to stall recovery (another worker runs them again), never completed or failed half-done.
   */
  close(): Promise<'drained' | 'abandoned'>;
}

/**
 * Makes a worker for your job types, in your own service. Tasks of these types submitted to the
 * longrun API (any instance on the same Redis and prefix) run here.
 * @example
 * const worker = createWorker({ redisUrl: process.env.REDIS_URL, jobs: [reportJob] });
 * await worker.start();
 * stopOnSignals(worker);
 */
export function createWorker(opts: WorkerOptions): LongrunWorker {
  const catalog = checkOptions(opts);
  const prefix = opts.prefix ?? 'longrun';
  const maxTtlMs = opts.maxTtlMs ?? 7 * 86_400_000;
  const graceMs = opts.shutdownGraceMs ?? 30_000;
  // Redis away: every connection and retry loop reports it; a kind of failure is written once
  // per 30 s (FailureLog), so an outage costs a few lines, not hundreds a minute.
  const logger = new FailureLog(
    opts.logger ??
      createLogger({ process: 'worker', level: opts.logLevel, format: opts.logFormat }),
  );
  const id = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const types = opts.types ? [...opts.types] : [...catalog.keys()];
  const descriptors = types.map((t) => describeJobType(catalog.get(t)!));
  const concurrency = opts.concurrency ?? 8;

  const connect = (role: 'worker' | 'subscriber'): Redis => {
    const conn = opts.connection
      ? duplicate(opts.connection, role)
      : createRedis(opts.redisUrl ?? 'redis://127.0.0.1:6379', role, {
          clusterNodes: opts.clusterNodes ?? [],
        });
    conn.on('error', (err: Error) => logger.warn({ err }, 'redis connection error'));
    conn.on('ready', () => logger.restored({}, 'redis connection restored'));
    return conn;
  };
  const connection = connect('worker');
  const subscriber = connect('subscriber');
  // One cancel listener per shard served: more than Node's default warning threshold of 10.
  subscriber.setMaxListeners(0);
  const owned = [connection, subscriber];
  const metrics = new WorkerMetrics(concurrency);
  // One set of run slots for the whole process: every queue (a type's own, the shared one) and
  // shard it consumes draws on it, so `concurrency` is what the process runs at once.
  const slots = new RunSlots(concurrency);
  const registry = new JobTypeRegistry(connection, prefix);
  const heartbeat = new RegistryHeartbeat({
    registry,
    workerId: id,
    descriptors,
    intervalMs: opts.heartbeatMs,
    logger,
  });
  const reconcile = opts.reconcile === false ? undefined : (opts.reconcile ?? {});
  const directory = reconcile && new JobTypeDirectory({ connection, prefix, refreshMs: 0 });

  /** What serving one shard takes: its job runtime, reconciler and webhook relay. */
  interface Served {
    number: number;
    worker: TaskWorker;
    reconciler: Reconciler | undefined;
    webhooks: WebhookDispatcher | undefined;
  }
  const served = new Map<number, Served>();
  // Shards the tasks are spread over, as far as this worker knows: its setting, raised to what
  // the API processes announce in Redis (`ShardCount`), so a worker left at the default serves
  // every shard (decision 37).
  let shardCount = opts.shards ?? 1;
  /** The process's concurrency split over the shards it serves (at least 1 each). */
  const perShard = (count: number) => Math.max(1, Math.ceil(concurrency / count));
  // A capped type's tasks go to shard 0 only (the API reads the cap from its queue there), so
  // the whole cap is set on every shard's queue: it holds however the tasks were placed.
  const typeCaps = opts.typeConcurrency ?? {};

  const serve = (number: number, count: number): Served => {
    const shard = shardPrefix(prefix, number);
    const worker = new TaskWorker({
      connection,
      subscriber,
      prefix: shard,
      channelPrefix: prefix,
      maxTtlMs,
      catalog,
      types,
      concurrency: perShard(count),
      slots,
      lockDurationMs: opts.lockDurationMs,
      stalledIntervalMs: opts.stalledIntervalMs,
      maxStalledCount: opts.maxStalledCount,
      runningMarkMs: opts.runningMarkMs,
      maxResultBytes: opts.maxResultBytes,
      logger,
      onRun: metrics.onRun,
      onQueueWait: metrics.onQueueWait,
      onActiveChange: metrics.onActiveChange,
      faults: opts.faults,
    });
    const reconciler =
      reconcile && directory
        ? new Reconciler({
            connection,
            prefix: shard,
            channelPrefix: prefix,
            types: directory,
            maxTtlMs,
            intervalMs: reconcile.intervalMs,
            graceMs: reconcile.graceMs,
            batch: reconcile.batch,
            logger,
            onRepair: metrics.onRepair,
          })
        : undefined;
    let webhooks: WebhookDispatcher | undefined;
    if (opts.webhooks !== false) {
      // The relay blocks on its shard's outbox: a connection of its own per shard.
      const relayConnection = connect('worker');
      owned.push(relayConnection);
      const settings = opts.webhooks ?? {};
      webhooks = new WebhookDispatcher({
        connection,
        relayConnection,
        prefix: shard,
        channelPrefix: prefix,
        maxTtlMs,
        pollIntervalMs: settings.pollIntervalMs ?? 5000,
        policy: new WebhookTargetPolicy(settings.allow ?? []),
        logger,
        consumerName: id,
        timeoutMs: settings.timeoutMs,
        // The process's delivery slots (16) and a tenant's share of them, split over the shards.
        concurrency: Math.max(1, Math.ceil(16 / count)),
        perTenant: Math.max(1, Math.ceil((settings.perTenant ?? 4) / count)),
        onDelivery: metrics.onDelivery,
      });
    }
    const entry = { number, worker, reconciler, webhooks };
    served.set(number, entry);
    return entry;
  };
  const wanted = (count: number) => opts.serveShards ?? Array.from({ length: count }, (_, i) => i);
  // Made now, so a bad setting (an unknown type) throws here, not at start.
  for (const number of wanted(shardCount)) serve(number, wanted(shardCount).length);

  /** Starts what serving the shard takes (its caps first, so no job runs above them). */
  const startServing = async (entry: Served) => {
    await applyTypeConcurrency(connection, shardPrefix(prefix, entry.number), catalog, typeCaps);
    await entry.worker.start();
    await entry.webhooks?.start();
    entry.reconciler?.start();
  };
  const shardCounts = new ShardCount(connection, prefix);
  let growing: Promise<void> = Promise.resolve();
  let growTimer: NodeJS.Timeout | undefined;
  /** Serves the shards the API processes added since (checked with the heartbeat). */
  const grow = async (announced: number) => {
    if (opts.serveShards || announced <= shardCount || state !== 'started') return;
    const numbers = wanted(announced);
    for (const entry of served.values()) entry.worker.setConcurrency(perShard(numbers.length));
    const added = numbers.filter((n) => !served.has(n)).map((n) => serve(n, numbers.length));
    for (const entry of added) {
      try {
        await startServing(entry);
      } catch (error) {
        // Made again on the next check (the count is not raised until every shard runs).
        served.delete(entry.number);
        await entry.worker.close(true).catch(() => undefined);
        throw error;
      }
    }
    shardCount = announced;
    metrics.setConcurrency(concurrency);
    if (added.length > 0) {
      logger.info({ shards: numbers, added: added.map((e) => e.number) }, 'serving more shards');
    }
  };
  let server: Server | undefined;
  let metricsPort: number | undefined;
  let state: 'new' | 'started' | 'closed' = 'new';

  // Connected again after start: Redis may have come back empty (a failover to a fresh replica,
  // a restart without persistence), so what this worker wrote at start is written again now
  // rather than at the next heartbeat: its entry in the registry and the types' caps. (The
  // webhook relays make their consumer groups again when they read; schedules live in Redis.)
  connection.on('ready', () => {
    if (state !== 'started') return;
    void (async () => {
      await heartbeat.beatNow();
      for (const n of served.keys()) {
        await applyTypeConcurrency(connection, shardPrefix(prefix, n), catalog, typeCaps);
      }
    })().catch((err: unknown) =>
      logger.warn({ err }, 'could not announce this worker again after reconnecting'),
    );
  });

  const quitAll = async (force: boolean) => {
    server?.close();
    if (force) for (const conn of owned) conn.disconnect();
    else await Promise.allSettled(owned.map((conn) => conn.quit()));
  };

  return {
    id,
    types,
    queueNames: [...new Set([...served.values()].flatMap((e) => e.worker.queueNames))],
    descriptors,
    metrics,
    shutdownGraceMs: graceMs,
    get metricsPort() {
      return metricsPort;
    },
    async start() {
      if (state !== 'new') throw new Error('this worker was started already');
      state = 'started';
      if (opts.metrics) {
        const { port, host = '0.0.0.0' } = opts.metrics;
        try {
          ({ server, port: metricsPort } = await metrics.listen(port, host));
        } catch (error) {
          state = 'new';
          if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
          throw new ConfigError(
            `The metrics port ${host}:${port} is taken (another worker on this host?): set LONGRUN_METRICS_PORT to a free port, or 0 for any`,
          );
        }
      }
      if (!opts.serveShards) {
        const announced = await shardCounts.read().catch(() => 0);
        if (announced > shardCount) {
          shardCount = announced;
          const numbers = wanted(announced);
          for (const entry of served.values())
            entry.worker.setConcurrency(perShard(numbers.length));
          for (const n of numbers) if (!served.has(n)) serve(n, numbers.length);
        }
      }
      const serving = [...served.values()];
      metrics.setConcurrency(concurrency);
      for (const entry of serving) await startServing(entry);
      // Registered once it takes jobs: a live count in the registry means work will run.
      await heartbeat.start();
      if (!opts.serveShards) {
        const check = () => {
          if (state !== 'started') return;
          growing = growing
            .then(() => shardCounts.read())
            .then(grow)
            .catch((err: unknown) => logger.warn({ err }, 'could not check the shard count'));
          growTimer = setTimeout(check, opts.heartbeatMs ?? 5000);
          growTimer.unref();
        };
        growTimer = setTimeout(check, opts.heartbeatMs ?? 5000);
        growTimer.unref();
      }
      logger.info(
        {
          workerId: id,
          metricsPort,
          concurrency,
          types,
          queues: [...served.values()][0]?.worker.queueNames,
          ...(served.size > 1 || shardCount > 1 ? { shards: [...served.keys()] } : {}),
        },
        'worker ready',
      );
    },
    async close() {
      if (state === 'closed') return 'drained';
      const wasStarted = state === 'started';
      state = 'closed';
      if (!wasStarted) {
        await quitAll(false);
        return 'drained';
      }
      logger.info({ graceMs }, 'worker stopping');
      clearTimeout(growTimer);
      growTimer = undefined;
      // A check waiting on an unreachable Redis must not hold the shutdown.
      await Promise.race([growing, sleep(1000)]);
      await heartbeat.stop();
      const serving = [...served.values()];
      await Promise.all(serving.map((e) => e.reconciler?.stop().catch(() => undefined)));
      const closed = Promise.all(serving.map((e) => e.worker.close())).then(() => true);
      const inTime = await Promise.race([closed, sleep(graceMs, false)]);
      if (!inTime) {
        // The jobs' locks expire and another worker runs them again (the path of a crash).
        logger.warn({ graceMs }, 'grace period over: leaving running jobs to stall recovery');
        await quitAll(true);
        return 'abandoned';
      }
      await Promise.all(serving.map((e) => e.webhooks?.close().catch(() => undefined)));
      await quitAll(false);
      logger.info({ workerId: id }, 'worker stopped');
      return 'drained';
    },
  };
}

/**
 * Closes the worker on SIGTERM or SIGINT and ends the process (exit 0 once drained or
 * abandoned; exit 1 if closing itself hangs past the grace period).
 */
export function stopOnSignals(worker: LongrunWorker): void {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(1), worker.shutdownGraceMs + 5000).unref();
    void worker.close().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/** A copy of the caller's connection with what this role needs (BullMQ: no retry limit). */
function duplicate(connection: Redis, role: 'worker' | 'subscriber'): Redis {
  const copy = connection.duplicate({
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    connectionName: `longrun-${role}`,
  });
  return role === 'subscriber' ? copy : coalesceWrites(copy);
}

/** Stores fleet-wide concurrency caps on the job types' queues (BullMQ global concurrency). */
async function applyTypeConcurrency(
  connection: Redis,
  prefix: string,
  catalog: JobCatalog,
  caps: Readonly<Record<string, number>>,
): Promise<void> {
  for (const [type, cap] of Object.entries(caps)) {
    const queue = new Queue(queueNameFor(catalog.get(type)!), { connection, prefix });
    await queue.setGlobalConcurrency(cap);
    await queue.close();
  }
}
