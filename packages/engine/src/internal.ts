/**
 * `@longrun/engine/internal`: every module of the engine, for this repository's tests and
 * benchmarks. No compatibility promise: names here move or go without notice. Code outside this
 * repository, and the apps, use `@longrun/engine` (decision 56).
 */
export * from './redis.js';
export * from './errors.js';
export * from './keys.js';
export * from './shards.js';
export * from './shard-count.js';
export * from './stable-json.js';
export * from './task-store.js';
export * from './task-queue.js';
export * from './task-log.js';
export * from './durable-store.js';
export * from './task-index.js';
export * from './reconciler.js';
export * from './worker/job-data.js';
export * from './worker/task-worker.js';
export * from './worker/give-back.js';
export * from './engine/outcomes.js';
export * from './engine/task-engine.js';
export * from './engine/batch.js';
export * from './engine/watch.js';
export * from './engine/answer-validator.js';
export * from './tenant-limiter.js';
export * from './tenant-budget.js';
export * from './task-events.js';
export * from './task-messages.js';
export * from './webhook-target.js';
export * from './webhooks.js';
export * from './completion-batch.js';
export * from './write-coalescing.js';
export * from './create-batch.js';
export type { JobAdd } from './bullmq-adapter.js';
export * from './registry/describe.js';
export * from './registry/job-type-registry.js';
export * from './registry/job-type-directory.js';
export * from './registry/heartbeat.js';
export * from './logger.js';
export * from './tracing/index.js';
export * from './failure-log.js';
export * from './engine/schedules.js';
export * from './engine/schedule-ticker.js';
export * from './schedule-store.js';
export * from './schedule-timing.js';
export * from './worker/run-slots.js';
export * from './fault-hooks.js';
export * from './engine/operations.js';
export * from './engine/engine-messages.js';
export * from './engine/shard.js';
export * from './engine/parts.js';
export * from './leases/lease-broker.js';
export * from './leases/lease-runs.js';
export * from './leases/lease-puller.js';
export * from './leases/lease-id.js';
export * from './leases/worker-presence.js';
export * from './worker/result-check.js';
export * from './worker/run-failure.js';
