/**
 * `@longrun/engine`'s public face: what a door (HTTP, MCP, A2A), the worker SDK and the apps
 * need, by name (decision 56). Its stores, batches, scripts and key layout stay inside; this
 * repository's tests and benchmarks reach them through `@longrun/engine/internal`, which makes
 * no compatibility promise.
 */

// The task API every door calls, and what it answers.
export { TaskEngine, type TaskEngineOptions, type FairShareOptions } from './engine/task-engine.js';
export type { EngineMessages } from './engine/engine-messages.js';
export type { AdminQueue, EngineHealth, QueueDepth } from './engine/operations.js';
export type { SubmitOptions, TickOptions } from './engine/submit.js';
export type {
  AnswerOutcome,
  CancelOutcome,
  Conflict,
  CreateScheduleOutcome,
  DeletePushConfigOutcome,
  DeleteScheduleOutcome,
  FieldError,
  ForgetOutcome,
  GetOutcome,
  GetScheduleOutcome,
  Invalid,
  ListOutcome,
  NotFound,
  PushConfigOutcome,
  ResultOutcome,
  ScheduleListOutcome,
  SetPushConfigOutcome,
  SubmitOutcome,
  TickOutcome,
} from './engine/outcomes.js';
export type { BatchItemOutcome, BatchOutcome } from './engine/batch.js';
export type { ReplayBatchOutcome, ReplayItem } from './engine/replay.js';
export type { OpenWatch } from './engine/watch.js';
export type { StepsOutcome } from './engine/step-page.js';
export type { PushOutcome } from './task-messages.js';
export type { Limited, TenantLimiter } from './tenant-limiter.js';
export { QUEUE_STATES, type QueueCounts } from './task-queue.js';
export { StoreFullError, StoreUnavailableError, guard } from './errors.js';
export { TaskEvents } from './task-events.js';
export {
  TENANT_MAX_BYTES_WITHOUT_MAXMEMORY,
  readMaxMemory,
  tenantBudgetFor,
} from './tenant-budget.js';

// Connections, logs and settings every process shares.
export {
  createRedis,
  type RedisClient,
  type RedisConnectOptions,
  type RedisRole,
} from './redis.js';
export { coalesceWrites } from './write-coalescing.js';
export { createLogger, type LogFormat, type LoggerOptions } from './logger.js';
export { parseTraceparent, traceLogFields } from './tracing/tracer.js';
export { FailureLog, type FailureLogOptions } from './failure-log.js';
export { taskKeys, queueNameFor, type TaskKeys } from './keys.js';
export { MAX_SHARDS, parseShardList, shardPrefix } from './shards.js';
export { ShardCount, shardsPerPrimary } from './shard-count.js';
export { WebhookTargetPolicy } from './webhook-target.js';
export { crashingFaults, type CrashPoint, type FaultHooks } from './fault-hooks.js';

// Job types: described by the worker SDK, published to and read from the registry.
export { describeJobType, type JobTypeDescriptor } from './registry/describe.js';
export {
  JobTypeRegistry,
  type RegisteredJobType,
  type RegisteredVersion,
} from './registry/job-type-registry.js';
export { JobTypeDirectory, type JobTypeDirectoryOptions } from './registry/job-type-directory.js';
export { RegistryHeartbeat, type RegistryHeartbeatOptions } from './registry/heartbeat.js';

// The worker runtime the SDK assembles for each shard it serves.
export { TaskWorker, type TaskWorkerOptions } from './worker/task-worker.js';
export { LiveTypes } from './worker/give-back.js';
export type { RunOutcome, TaskWorkerLogger } from './worker/job-data.js';
export { RunSlots } from './worker/run-slots.js';
export { Reconciler, type ReconcilerOptions } from './reconciler.js';
export {
  WebhookDispatcher,
  type DeliveryOutcome,
  type WebhookDispatcherOptions,
} from './webhooks.js';

// HTTP workers (decision 62): leases of jobs, served by the API over plain HTTP.
export {
  LeaseBroker,
  type LeaseBrokerOptions,
  type LeaseObserver,
  type LeaseTakeOutcome,
  type LeaseView,
} from './leases/lease-broker.js';
export type { FinishOutcome, HeartbeatOutcome, LeaseEnded } from './leases/lease-runs.js';
export type { RegisterOutcome, UnregisterOutcome } from './leases/worker-types.js';
export { describeJsonJobType, type JsonJobTypeSpec } from './registry/describe.js';
// Durable tasks (issue 29).
export type { DurableTasks, CompleteWaitpointOutcome } from './engine/durable.js';
export type { DurableHost } from './worker/durable-host.js';
