import type { Redis } from 'ioredis';
import { z } from 'zod';
import {
  ConfigError,
  RESERVED_JOB_TYPE_PREFIX,
  type JobCatalog,
  type JobTypeDefinition,
} from '@longrun/core';
import {
  MAX_SHARDS,
  type FaultHooks,
  type LogFormat,
  type TaskWorkerLogger,
} from '@longrun/engine';

/** What `createWorker` takes. Only `jobs` is required; the rest have the README's defaults. */
export interface WorkerOptions {
  /** The job types this worker runs (`defineJobType`), as a list or a catalog. */
  jobs: readonly JobTypeDefinition[] | JobCatalog;
  /** Redis to connect to (default `redis://127.0.0.1:6379`); ignored with `connection`. */
  redisUrl?: string | undefined;
  /** Redis Cluster seed nodes (`host:port`); when given, `redisUrl` is not used. */
  clusterNodes?: readonly string[] | undefined;
  /**
   * An ioredis connection of yours to copy: the worker opens its own connections with its
   * settings (`connection.duplicate`) and never closes yours.
   */
  connection?: Redis | undefined;
  /** Key prefix, the same as the API's `LONGRUN_PREFIX` (default `longrun`). */
  prefix?: string | undefined;
  /** The API's `LONGRUN_MAX_TTL_MS` (default 7 days). */
  maxTtlMs?: number | undefined;
  /**
   * The API's `LONGRUN_TENANT_MAX_BYTES`: durable tasks' children count against the tenant's
   * storage budget and are refused past it, as a submit is (`ctx.runTask(s)` throws
   * `DurableTaskError` `storage-budget`). Unset: a quarter of Redis's `maxmemory` (256 MiB
   * without one), as the API; 0: no budget.
   */
  tenantMaxBytes?: number | undefined;
  /** The API's `LONGRUN_SHARDS`: how many shards the tasks are spread over (default 1). */
  shards?: number | undefined;
  /**
   * The shards (indexes from 0) this worker takes jobs from (default: all of `shards`), so a fleet
   * can be split by shard as well as by job type (`LONGRUN_WORKER_SHARDS`).
   */
  serveShards?: readonly number[] | undefined;
  /**
   * Jobs this process runs at once, per queue (default 8); with several shards served, split
   * evenly between them (at least 1 each).
   */
  concurrency?: number | undefined;
  /** Run only these of `jobs` (default: all). */
  types?: readonly string[] | undefined;
  /** Fleet-wide caps per type, stored on the type's own queue: `{ export: 2 }` (a capped type runs on shard 0 only). */
  typeConcurrency?: Readonly<Record<string, number>> | undefined;
  lockDurationMs?: number | undefined;
  stalledIntervalMs?: number | undefined;
  /**
   * How long a durable task that reached the end of its retention while it waited stays readable
   * once it ended `failed` with `error.code: "expired"` (`LONGRUN_EXPIRED_GRACE_MS`; default 10 min).
   */
  expiredGraceMs?: number | undefined;
  /** Stalls (lost locks) before a job is failed as lost (default 3). */
  maxStalledCount?: number | undefined;
  /**
   * A durable parent waiting on its children runs a cheap check this often at least (default
   * 60 s, `LONGRUN_CHILD_RECHECK_MS`): a lost wake-up, a gone child (docs/durable-tasks.md).
   */
  childRecheckMs?: number | undefined;
  /** See the README's `LONGRUN_RUNNING_MARK_MS` (default 100). */
  runningMarkMs?: number | undefined;
  /** A result whose JSON is longer fails its task with `result-too-large` (default 2 MiB; 0: no cap). */
  maxResultBytes?: number | undefined;
  /**
   * The most `ctx.step` calls a durable task records (default 1 000; 0: no cap): past it the step
   * throws `DurableTaskError` with code `too-many-steps` and the task fails.
   */
  maxSteps?: number | undefined;
  /** How long `close()` waits for running handlers before leaving them to stall recovery (30 s). */
  shutdownGraceMs?: number | undefined;
  /** A pino-compatible logger (default: pino at `logLevel` in `logFormat`, named `longrun-worker`). */
  logger?: TaskWorkerLogger | undefined;
  logLevel?: string | undefined;
  /** `auto` (default): readable lines on a terminal unless NODE_ENV=production, JSON otherwise. */
  logFormat?: LogFormat | undefined;
  /** Serve `/metrics` and `/healthz` on this port (0: any free one). Default: not served. */
  metrics?: { port: number; host?: string | undefined } | false | undefined;
  /** Deliver webhooks (callbacks) from this worker (default on, with no extra allowed hosts). */
  webhooks?:
    | {
        allow?: readonly string[];
        pollIntervalMs?: number;
        /** Bound on one delivery's whole exchange (default 10 s). */
        timeoutMs?: number;
        /** Deliveries one tenant may have in flight in this process (default 4 of 16). */
        perTenant?: number;
      }
    | false
    | undefined;
  /** The reconciler (default on: every 10 s, grace 30 s, 500 per sweep). */
  reconcile?: { intervalMs?: number; graceMs?: number; batch?: number } | false | undefined;
  /** How often this worker renews its entry in the job-type registry (default 5 s). */
  heartbeatMs?: number | undefined;
  /**
   * Test seam: points where a test stops the process on purpose (`workerOptionsFromEnv` builds
   * crashing ones from `LONGRUN_TEST_CRASH_AT`). Default none.
   */
  faults?: FaultHooks | undefined;
}

const int = (min: number, max: number) => z.number().int().min(min).max(max);

/** Checks the plain settings once, at creation, naming the bad one. */
const settingsSchema = z.object({
  redisUrl: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9_{}.-]{1,64}$/, 'letters, digits, _ { } . - only')
    .optional(),
  maxTtlMs: int(1000, 365 * 86_400_000).optional(),
  tenantMaxBytes: int(0, Number.MAX_SAFE_INTEGER).optional(),
  concurrency: int(1, 10_000).optional(),
  shards: int(1, MAX_SHARDS).optional(),
  serveShards: z
    .array(int(0, MAX_SHARDS - 1))
    .min(1)
    .optional(),
  lockDurationMs: int(500, 86_400_000).optional(),
  stalledIntervalMs: int(500, 86_400_000).optional(),
  expiredGraceMs: int(1000, 7 * 86_400_000).optional(),
  maxStalledCount: int(0, 100).optional(),
  childRecheckMs: int(100, 86_400_000).optional(),
  runningMarkMs: int(0, 3_600_000).optional(),
  shutdownGraceMs: int(0, 86_400_000).optional(),
  heartbeatMs: int(100, 600_000).optional(),
  maxResultBytes: int(0, 512 * 1024 * 1024).optional(),
  maxSteps: int(0, 1_000_000).optional(),
  logFormat: z.enum(['auto', 'json', 'pretty']).optional(),
});

/** The job types as a catalog, after checking every option; throws `ConfigError`. */
export function checkOptions(opts: WorkerOptions): JobCatalog {
  const parsed = settingsSchema.safeParse(opts);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`createWorker: ${issue.path.join('.')} ${issue.message}`);
  }
  const list = Array.isArray(opts.jobs)
    ? (opts.jobs as readonly JobTypeDefinition[])
    : [...(opts.jobs as JobCatalog).values()];
  if (list.length === 0) throw new ConfigError('createWorker: jobs names no job type');
  const catalog = new Map<string, JobTypeDefinition>();
  for (const job of list) {
    if (!job || typeof job.name !== 'string' || typeof job.handler !== 'function') {
      throw new ConfigError('createWorker: every job must come from defineJobType');
    }
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(job.name)) {
      throw new ConfigError(`createWorker: job type name "${job.name}" is not allowed`);
    }
    if (job.name.startsWith(RESERVED_JOB_TYPE_PREFIX)) {
      throw new ConfigError(
        `createWorker: job type name "${job.name}" is reserved: names starting with "${RESERVED_JOB_TYPE_PREFIX}" belong to longrun's own MCP tools`,
      );
    }
    if (catalog.has(job.name))
      throw new ConfigError(`createWorker: duplicate job type ${job.name}`);
    catalog.set(job.name, job);
  }
  for (const job of catalog.values()) {
    const t = job.timeoutMs;
    if (t !== undefined && (!Number.isInteger(t) || t < 100 || t > 2_147_483_647)) {
      throw new ConfigError(
        `createWorker: ${job.name}.timeoutMs must be an integer from 100 to 2147483647 (ms)`,
      );
    }
  }
  const limited = new Map<string, string>(); // queue -> the rate-limited type on it
  for (const job of catalog.values()) {
    const limit = job.rateLimit;
    if (!limit) continue;
    if (!job.queue) {
      throw new ConfigError(
        `createWorker: ${job.name} has a rateLimit: give it a queue of its own (BullMQ limits a whole queue)`,
      );
    }
    if (
      !Number.isInteger(limit.max) ||
      limit.max < 1 ||
      !Number.isInteger(limit.durationMs) ||
      limit.durationMs < 1
    ) {
      throw new ConfigError(
        `createWorker: ${job.name}.rateLimit needs integers max >= 1 and durationMs >= 1`,
      );
    }
    limited.set(job.queue, job.name);
  }
  for (const job of catalog.values()) {
    const other = job.queue ? limited.get(job.queue) : undefined;
    if (other && other !== job.name) {
      throw new ConfigError(
        `createWorker: ${job.name} shares queue "${job.queue}" with rate-limited ${other}: give one of them a queue of its own`,
      );
    }
  }
  for (const type of opts.types ?? []) {
    if (!catalog.has(type))
      throw new ConfigError(`createWorker: types names unknown job type ${type}`);
  }
  for (const [type, cap] of Object.entries(opts.typeConcurrency ?? {})) {
    const job = catalog.get(type);
    if (!job) throw new ConfigError(`createWorker: typeConcurrency names unknown job type ${type}`);
    if (!job.queue) {
      throw new ConfigError(
        `createWorker: typeConcurrency: ${type} shares the default queue; give it a queue of its own`,
      );
    }
    if (!Number.isInteger(cap) || cap < 1) {
      throw new ConfigError(`createWorker: typeConcurrency.${type} must be an integer >= 1`);
    }
  }
  return catalog;
}
