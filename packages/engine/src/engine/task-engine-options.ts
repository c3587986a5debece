import type { Redis } from 'ioredis';
import type { FaultHooks } from '../fault-hooks.js';
import type { JobTypeDirectory } from '../registry/job-type-directory.js';
import type { TaskEvents } from '../task-events.js';
import type { WebhookTargetPolicy } from '../webhook-target.js';
import type { TaskWorkerLogger } from '../worker/job-data.js';
import type { FairShareOptions } from './submit.js';

export interface TaskEngineOptions {
  /** A producer connection (`createRedis(url, 'producer')`); the engine never closes it. */
  connection: Redis;
  /** Wake-ups for watches, on a subscriber connection of its own. */
  events: TaskEvents;
  prefix: string;
  /**
   * Shards the tasks are spread over (`LONGRUN_SHARDS`, default 1; decision 37): each its own
   * hash tag, so a Redis Cluster's primaries share the work. A task id names its shard, so a task
   * stays readable when the count changes.
   */
  shards?: number | undefined;
  /**
   * The job types tasks may have (their input schemas, queues and attempts), as workers
   * registered them. The caller starts and closes it.
   */
  types: JobTypeDirectory;
  webhookPolicy: WebhookTargetPolicy;
  pollIntervalMs: number;
  defaultTtlMs: number;
  maxTtlMs: number;
  /** Deadline for each Redis step of a call; past it the call throws `StoreUnavailableError`. */
  redisTimeoutMs: number;
  /** Non-terminal tasks per tenant; 0 = no cap. */
  maxOpenTasks: number;
  /**
   * Bytes one tenant's tasks may keep in Redis (records with inputs, results and answers),
   * counted when written, given back on expiry or delete; 0 (default here) = no budget. The API
   * sets it from `LONGRUN_TENANT_MAX_BYTES`, by default a quarter of Redis's `maxmemory`
   * (`tenantBudgetFor`), and may change it later (`setTenantMaxBytes`).
   */
  tenantMaxBytes?: number | undefined;
  /**
   * Fair share of the workers between tenants (decision 33): each task's BullMQ priority is its
   * tenant's virtual start time, so tenants take turns at the head of a queue. `false` queues in
   * arrival order (default: on, every tenant weight 1).
   */
  fairShare?: FairShareOptions | false | undefined;
  logger?: TaskWorkerLogger | undefined;
  /** How often a watch re-checks without a wake-up (default 15 s). */
  heartbeatMs?: number | undefined;
  /** Test seam (`FaultHooks.afterCreate`); default none. */
  faults?: FaultHooks | undefined;
  /** Schedules one tenant may have (default 100, `LONGRUN_MAX_SCHEDULES`). */
  maxSchedules?: number | undefined;
  /**
   * The shortest `everyMs` of a schedule, and the closest two runs of its cron may be (default
   * 1000, `LONGRUN_SCHEDULE_MIN_EVERY_MS`).
   */
  scheduleMinEveryMs?: number | undefined;
}
