import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobCatalog } from '@longrun/core';
import {
  queueNameFor,
  Reconciler,
  shardPrefix,
  TaskWorker,
  WebhookDispatcher,
  WebhookTargetPolicy,
  type DurableHost,
  type FailureLog,
  type JobTypeDirectory,
  type LiveTypes,
  type RunSlots,
} from '@longrun/engine';
import type { Connections } from './connections.js';
import type { WorkerMetrics } from './metrics.js';
import type { WorkerOptions } from './options.js';

/** What every shard a worker serves shares: its options, connections, slots and metrics. */
export interface ShardServiceDeps {
  opts: WorkerOptions;
  id: string;
  prefix: string;
  maxTtlMs: number;
  catalog: JobCatalog;
  types: readonly string[];
  connection: Redis;
  subscriber: Redis;
  connections: Connections;
  slots: RunSlots;
  metrics: WorkerMetrics;
  logger: FailureLog;
  /** The job types for the reconciler (unset: no reconciler). */
  directory: JobTypeDirectory | undefined;
  /** Durable handlers' child tasks (issue 29). */
  durableHost?: DurableHost | undefined;
  /** Which types live workers serve (jobs of others' types are given back sooner). */
  liveTypes?: LiveTypes | undefined;
}

/**
 * What serving one shard takes: its job runtime (`TaskWorker`), its reconciler and its webhook
 * relay, made together and started in order (the types' caps first, so no job runs above them).
 */
export class ServedShard {
  readonly worker: TaskWorker;
  readonly reconciler: Reconciler | undefined;
  readonly webhooks: WebhookDispatcher | undefined;

  /** Made for `count` shards served: the process's concurrency and delivery slots split over them. */
  constructor(
    private readonly deps: ShardServiceDeps,
    readonly number: number,
    count: number,
  ) {
    const { opts, prefix, maxTtlMs, connection, logger, metrics } = deps;
    const shard = shardPrefix(prefix, number);
    this.worker = new TaskWorker({
      connection,
      subscriber: deps.subscriber,
      prefix: shard,
      channelPrefix: prefix,
      maxTtlMs,
      catalog: deps.catalog,
      types: deps.types,
      concurrency: perShard(opts.concurrency ?? 8, count),
      slots: deps.slots,
      lockDurationMs: opts.lockDurationMs,
      stalledIntervalMs: opts.stalledIntervalMs,
      expiredGraceMs: opts.expiredGraceMs,
      maxStalledCount: opts.maxStalledCount,
      runningMarkMs: opts.runningMarkMs,
      maxResultBytes: opts.maxResultBytes,
      maxSteps: opts.maxSteps,
      logger,
      onRun: metrics.onRun,
      onQueueWait: metrics.onQueueWait,
      onActiveChange: metrics.onActiveChange,
      faults: opts.faults,
      durableHost: deps.durableHost,
      liveTypes: deps.liveTypes,
    });
    const reconcile = opts.reconcile === false ? undefined : (opts.reconcile ?? {});
    this.reconciler =
      reconcile && deps.directory
        ? new Reconciler({
            connection,
            prefix: shard,
            channelPrefix: prefix,
            types: deps.directory,
            maxTtlMs,
            intervalMs: reconcile.intervalMs,
            graceMs: reconcile.graceMs,
            batch: reconcile.batch,
            logger,
            onRepair: metrics.onRepair,
          })
        : undefined;
    if (opts.webhooks !== false) {
      const settings = opts.webhooks ?? {};
      this.webhooks = new WebhookDispatcher({
        connection,
        // The relay blocks on its shard's outbox: a connection of its own per shard.
        relayConnection: deps.connections.open('worker'),
        prefix: shard,
        channelPrefix: prefix,
        maxTtlMs,
        pollIntervalMs: settings.pollIntervalMs ?? 5000,
        policy: new WebhookTargetPolicy(settings.allow ?? []),
        logger,
        consumerName: deps.id,
        timeoutMs: settings.timeoutMs,
        // The process's delivery slots (16) and a tenant's share of them, split over the shards.
        concurrency: Math.max(1, Math.ceil(16 / count)),
        perTenant: Math.max(1, Math.ceil((settings.perTenant ?? 4) / count)),
        onDelivery: metrics.onDelivery,
      });
    }
  }

  /** Starts taking jobs, relaying webhooks and repairing, the types' caps set first. */
  async start(): Promise<void> {
    await this.applyTypeCaps();
    await this.worker.start();
    await this.webhooks?.start();
    this.reconciler?.start();
  }

  /** The process now serves `count` shards: this one's share of its concurrency. */
  resize(count: number): void {
    this.worker.setConcurrency(perShard(this.deps.opts.concurrency ?? 8, count));
  }

  /**
   * Stores the fleet-wide concurrency caps on the job types' queues (BullMQ global concurrency).
   * A capped type's tasks go to shard 0 only (the API reads the cap from its queue there), so
   * the whole cap is set on every shard's queue: it holds however the tasks were placed.
   */
  async applyTypeCaps(): Promise<void> {
    const { connection, catalog } = this.deps;
    const prefix = shardPrefix(this.deps.prefix, this.number);
    for (const [type, cap] of Object.entries(this.deps.opts.typeConcurrency ?? {})) {
      const queue = new Queue(queueNameFor(catalog.get(type)!), { connection, prefix });
      await queue.setGlobalConcurrency(cap);
      await queue.close();
    }
  }
}

/** The process's concurrency split over the shards it serves (at least 1 each). */
function perShard(concurrency: number, count: number): number {
  return Math.max(1, Math.ceil(concurrency / count));
}
