import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { ConfigError, type JobCatalog } from '@longrun/core';
import {
  createLogger,
  describeJobType,
  FailureLog,
  JobTypeDirectory,
  JobTypeRegistry,
  LiveTypes,
  RegistryHeartbeat,
  RunSlots,
  ShardCount,
  type JobTypeDescriptor,
} from '@longrun/engine';
import { ChildTasks } from './child-tasks.js';
import { Connections } from './connections.js';
import { WorkerMetrics } from './metrics.js';
import { checkOptions, type WorkerOptions } from './options.js';
import { ServedShard, type ShardServiceDeps } from './served-shard.js';

/**
 * A longrun worker for your job types (`createWorker` makes one). Its life: made (options
 * checked, connections opened, one `ServedShard` per shard it serves), `start` (metrics server,
 * the shards announced since, each shard's runtime, then registration in the job-type registry
 * and a watch on the shard count), `close` (stop watching, deregister, drain running handlers
 * within the grace period, close relays and connections).
 */
export class LongrunWorker {
  /** This process's name in the registry and the webhook consumer group. */
  readonly id = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  /** The job types it runs and the BullMQ queues it consumes. */
  readonly types: readonly string[];
  readonly queueNames: readonly string[];
  /** What it publishes to the registry (name, version, input schema, queue, attempts). */
  readonly descriptors: readonly JobTypeDescriptor[];
  /** Its Prometheus metrics (served only with the `metrics` option; register them elsewhere). */
  readonly metrics: WorkerMetrics;
  /** How long `close()` waits for running handlers. */
  readonly shutdownGraceMs: number;

  private readonly logger: FailureLog;
  private readonly concurrency: number;
  private readonly connections: Connections;
  private readonly connection: Redis;
  private readonly heartbeat: RegistryHeartbeat;
  private readonly shardCounts: ShardCount;
  private readonly shardDeps: ShardServiceDeps;
  /** Durable handlers' child tasks (issue 29). */
  private readonly children: ChildTasks;
  /** The shards served, by number. */
  private readonly served = new Map<number, ServedShard>();
  /**
   * Shards the tasks are spread over, as far as this worker knows: its setting, raised to what
   * the API processes announce in Redis (`ShardCount`), so a worker left at the default serves
   * every shard (decision 37).
   */
  private shardCount: number;
  private state: 'new' | 'started' | 'closed' = 'new';
  private server: Server | undefined;
  private port: number | undefined;
  private growing: Promise<void> = Promise.resolve();
  private growTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: WorkerOptions) {
    const catalog: JobCatalog = checkOptions(opts);
    const prefix = opts.prefix ?? 'longrun';
    this.shutdownGraceMs = opts.shutdownGraceMs ?? 30_000;
    // Redis away: every connection and retry loop reports it; a kind of failure is written once
    // per 30 s (FailureLog), so an outage costs a few lines, not hundreds a minute.
    this.logger = new FailureLog(
      opts.logger ??
        createLogger({ process: 'worker', level: opts.logLevel, format: opts.logFormat }),
    );
    this.types = opts.types ? [...opts.types] : [...catalog.keys()];
    this.descriptors = this.types.map((t) => describeJobType(catalog.get(t)!));
    this.concurrency = opts.concurrency ?? 8;
    this.connections = new Connections(opts, this.logger);
    this.connection = this.connections.open('worker');
    const subscriber = this.connections.open('subscriber');
    // One cancel listener per shard served: more than Node's default warning threshold of 10.
    subscriber.setMaxListeners(0);
    this.metrics = new WorkerMetrics(this.concurrency);
    this.heartbeat = new RegistryHeartbeat({
      registry: new JobTypeRegistry(this.connection, prefix),
      workerId: this.id,
      descriptors: this.descriptors,
      intervalMs: opts.heartbeatMs,
      logger: this.logger,
    });
    this.shardCounts = new ShardCount(this.connection, prefix);
    this.shardCount = opts.shards ?? 1;
    const connection = this.connection;
    this.children = new ChildTasks({
      connection,
      subscriber,
      prefix,
      maxTtlMs: opts.maxTtlMs ?? 7 * 86_400_000,
      shards: () => this.shardCount,
      tenantMaxBytes: opts.tenantMaxBytes,
      childRecheckMs: opts.childRecheckMs,
      faults: opts.faults,
    });
    this.shardDeps = {
      durableHost: this.children,
      opts,
      id: this.id,
      prefix,
      maxTtlMs: opts.maxTtlMs ?? 7 * 86_400_000,
      catalog,
      types: this.types,
      connection,
      subscriber,
      connections: this.connections,
      // One set of run slots for the whole process: every queue (a type's own, the shared one)
      // and shard it consumes draws on it, so `concurrency` is what the process runs at once.
      slots: new RunSlots(this.concurrency),
      metrics: this.metrics,
      logger: this.logger,
      directory:
        opts.reconcile === false
          ? undefined
          : new JobTypeDirectory({ connection, prefix, refreshMs: 0 }),
      liveTypes: new LiveTypes(new JobTypeRegistry(connection, prefix)),
    };
    // Made now, so a bad setting (an unknown type) throws here, not at start.
    this.serve(this.wanted(this.shardCount));
    this.queueNames = [...new Set([...this.served.values()].flatMap((e) => e.worker.queueNames))];
    this.connection.on('ready', () => this.reannounce());
  }

  /** The port `/metrics` is served on, once started with `metrics`. */
  get metricsPort(): number | undefined {
    return this.port;
  }

  /** Registers the types, then starts taking jobs. */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('this worker was started already');
    this.state = 'started';
    await this.serveMetrics();
    await this.adoptAnnouncedShards();
    this.metrics.setConcurrency(this.concurrency);
    for (const shard of [...this.served.values()]) await shard.start();
    // Registered once it takes jobs: a live count in the registry means work will run.
    await this.heartbeat.start();
    this.watchShardCount();
    this.logger.info(
      {
        workerId: this.id,
        metricsPort: this.port,
        concurrency: this.concurrency,
        types: this.types,
        queues: [...this.served.values()][0]?.worker.queueNames,
        ...(this.served.size > 1 || this.shardCount > 1 ? { shards: [...this.served.keys()] } : {}),
      },
      'worker ready',
    );
  }

  /**
   * Stops taking jobs and waits up to `shutdownGraceMs` for running ones; past it they are left
   * to stall recovery (another worker runs them again), never completed or failed half-done.
   */
  async close(): Promise<'drained' | 'abandoned'> {
    if (this.state === 'closed') return 'drained';
    const wasStarted = this.state === 'started';
    this.state = 'closed';
    if (!wasStarted) {
      await this.disconnect(false);
      return 'drained';
    }
    const graceMs = this.shutdownGraceMs;
    this.logger.info({ graceMs }, 'worker stopping');
    await this.stopWatching();
    await this.heartbeat.stop();
    const serving = [...this.served.values()];
    await Promise.all(serving.map((e) => e.reconciler?.stop().catch(() => undefined)));
    if (!(await this.drain(serving, graceMs))) {
      // The jobs' locks expire and another worker runs them again (the path of a crash).
      this.logger.warn({ graceMs }, 'grace period over: leaving running jobs to stall recovery');
      await this.disconnect(true);
      return 'abandoned';
    }
    await Promise.all(serving.map((e) => e.webhooks?.close().catch(() => undefined)));
    await this.disconnect(false);
    this.logger.info({ workerId: this.id }, 'worker stopped');
    return 'drained';
  }

  /** Serves `/metrics` when asked to; a taken port is a configuration error that says so. */
  private async serveMetrics(): Promise<void> {
    if (!this.opts.metrics) return;
    const { port, host = '0.0.0.0' } = this.opts.metrics;
    try {
      ({ server: this.server, port: this.port } = await this.metrics.listen(port, host));
    } catch (error) {
      this.state = 'new';
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      throw new ConfigError(
        `The metrics port ${host}:${port} is taken (another worker on this host?): set LONGRUN_METRICS_PORT to a free port, or 0 for any`,
      );
    }
  }

  /** Serves, from the start, the shards the API processes announced beyond this worker's setting. */
  private async adoptAnnouncedShards(): Promise<void> {
    if (this.opts.serveShards) return;
    const announced = await this.shardCounts.read().catch(() => 0);
    if (announced <= this.shardCount) return;
    this.shardCount = announced;
    this.serve(this.wanted(announced));
  }

  /** Checks the shard count with each heartbeat, serving the shards the API processes add. */
  private watchShardCount(): void {
    if (this.opts.serveShards) return;
    const every = this.opts.heartbeatMs ?? 5000;
    const check = () => {
      if (this.state !== 'started') return;
      this.growing = this.growing
        .then(() => this.shardCounts.read())
        .then((announced) => this.grow(announced))
        .catch((err: unknown) => this.logger.warn({ err }, 'could not check the shard count'));
      this.growTimer = setTimeout(check, every).unref();
    };
    this.growTimer = setTimeout(check, every).unref();
  }

  private async stopWatching(): Promise<void> {
    clearTimeout(this.growTimer);
    this.growTimer = undefined;
    // A check waiting on an unreachable Redis must not hold the shutdown.
    await Promise.race([this.growing, sleep(1000)]);
  }

  /** Serves the shards the API processes added since (checked with the heartbeat). */
  private async grow(announced: number): Promise<void> {
    if (this.opts.serveShards || announced <= this.shardCount || this.state !== 'started') return;
    const numbers = this.wanted(announced);
    const added = this.serve(numbers);
    for (const shard of added) {
      try {
        await shard.start();
      } catch (error) {
        // Made again on the next check (the count is not raised until every shard runs).
        this.served.delete(shard.number);
        await shard.worker.close(true).catch(() => undefined);
        throw error;
      }
    }
    this.shardCount = announced;
    this.metrics.setConcurrency(this.concurrency);
    if (added.length > 0) {
      const shards = { shards: numbers, added: added.map((e) => e.number) };
      this.logger.info(shards, 'serving more shards');
    }
  }

  /**
   * Serves `numbers` (those not served yet are made, not started), the process's concurrency
   * split over all of them; the shards made.
   */
  private serve(numbers: readonly number[]): ServedShard[] {
    for (const shard of this.served.values()) shard.resize(numbers.length);
    const added = numbers
      .filter((n) => !this.served.has(n))
      .map((n) => new ServedShard(this.shardDeps, n, numbers.length));
    for (const shard of added) this.served.set(shard.number, shard);
    return added;
  }

  /** The shards to serve when tasks are spread over `count`. */
  private wanted(count: number): readonly number[] {
    return this.opts.serveShards ?? Array.from({ length: count }, (_, i) => i);
  }

  /**
   * Connected again after start: Redis may have come back empty (a failover to a fresh replica,
   * a restart without persistence), so what this worker wrote at start is written again now
   * rather than at the next heartbeat: its entry in the registry and the types' caps. (The
   * webhook relays make their consumer groups again when they read; schedules live in Redis.)
   */
  private reannounce(): void {
    if (this.state !== 'started') return;
    void (async () => {
      await this.heartbeat.beatNow();
      for (const shard of this.served.values()) await shard.applyTypeCaps();
    })().catch((err: unknown) =>
      this.logger.warn({ err }, 'could not announce this worker again after reconnecting'),
    );
  }

  /** Waits up to `graceMs` for the running handlers; `false` when they did not finish in time. */
  private async drain(serving: readonly ServedShard[], graceMs: number): Promise<boolean> {
    const closed = Promise.all(serving.map((e) => e.worker.close())).then(() => true);
    return Promise.race([closed, sleep(graceMs, false)]);
  }

  private async disconnect(force: boolean): Promise<void> {
    this.server?.close();
    await this.children.close().catch(() => undefined);
    await this.connections.close(force);
  }
}
