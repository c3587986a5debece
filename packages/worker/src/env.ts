import { z } from 'zod';
import { clusterPrefixIssue, parseEnv, sharedEnvShape, splitList } from '@longrun/core';
import { crashingFaults, parseShardList } from '@longrun/engine';
import type { WorkerOptions } from './options.js';

const schema = z
  .object({
    ...sharedEnvShape,
    LONGRUN_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(8),
    /**
     * The shards this worker serves: `all` (default: every shard the API processes announce), or
     * indexes and ranges, `0-3,8`.
     */
    LONGRUN_WORKER_SHARDS: z.string().default('all'),
    /** 0 picks a free port (handy when several workers share a host). */
    LONGRUN_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9464),
    LONGRUN_METRICS_HOST: z.string().default('0.0.0.0'),
    LONGRUN_LOCK_DURATION_MS: z.coerce.number().int().min(500).optional(),
    LONGRUN_STALLED_INTERVAL_MS: z.coerce.number().int().min(500).optional(),
    LONGRUN_MAX_STALLED_COUNT: z.coerce.number().int().min(0).max(100).default(3),
    /** How often a durable parent waiting on children re-checks them at least (ms). */
    LONGRUN_CHILD_RECHECK_MS: z.coerce.number().int().min(100).max(86_400_000).default(60_000),
    LONGRUN_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
    /** How long a durable task that ended `expired` (its retention passed as it waited) stays readable. */
    LONGRUN_EXPIRED_GRACE_MS: z.coerce
      .number()
      .int()
      .min(1000)
      .max(7 * 86_400_000)
      .default(600_000),
    /**
     * A first run is marked `running` once its handler has run this long (ms); shorter runs go
     * from queued to their outcome in one script. 0: check and mark every run before it starts.
     */
    LONGRUN_RUNNING_MARK_MS: z.coerce.number().int().min(0).max(3_600_000).default(100),
    /**
     * How often the reconciler sweeps open tasks for ones whose job was lost, never arrived or
     * was parked unrecorded (one worker at a time sweeps); 0 turns it off in this process.
     */
    LONGRUN_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).max(3_600_000).default(10_000),
    /** A task changed within this long is left alone by the reconciler (its writer may be at work). */
    LONGRUN_RECONCILE_GRACE_MS: z.coerce.number().int().min(100).max(86_400_000).default(30_000),
    /** Open tasks the reconciler checks per sweep. */
    LONGRUN_RECONCILE_BATCH: z.coerce.number().int().min(1).max(10_000).default(500),
    /** The whole of one webhook delivery (connect, send, status line and headers). */
    LONGRUN_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(10_000),
    /** Deliveries one tenant may have in flight in one worker process (of 16). */
    LONGRUN_WEBHOOK_TENANT_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(4),
    /** Run only these job types (comma list); unset: all. */
    LONGRUN_WORKER_TYPES: z
      .string()
      .optional()
      .transform((s) => (s === undefined ? undefined : splitList(s))),
    /**
     * Fleet-wide concurrency caps per job type, `type:n[,type:n…]`, stored on the type's queue in
     * Redis (BullMQ global concurrency), so they hold however many workers run.
     */
    LONGRUN_TYPE_CONCURRENCY: z
      .string()
      .default('')
      .transform((raw, ctx) => {
        const caps = new Map<string, number>();
        for (const pair of splitList(raw)) {
          const [type = '', n = ''] = pair.split(':');
          if (!type || !/^\d+$/.test(n) || Number(n) < 1) {
            ctx.addIssue({ code: 'custom', message: `"${pair}" must be type:n with n >= 1` });
            return z.NEVER;
          }
          caps.set(type, Number(n));
        }
        return caps;
      }),
  })
  .refine((c) => clusterPrefixIssue(c) === null, {
    path: ['LONGRUN_PREFIX'],
    message: 'must contain a {hash tag} on Redis Cluster, e.g. {longrun}',
  })
  .transform((c, ctx) => {
    try {
      return {
        ...c,
        // `all` is left open: the worker serves every shard announced in Redis, as they grow.
        LONGRUN_WORKER_SHARDS: ['', 'all'].includes(c.LONGRUN_WORKER_SHARDS.trim())
          ? undefined
          : parseShardList(c.LONGRUN_WORKER_SHARDS, c.LONGRUN_SHARDS),
      };
    } catch (error) {
      ctx.addIssue({
        code: 'custom',
        path: ['LONGRUN_WORKER_SHARDS'],
        message: (error as Error).message,
      });
      return z.NEVER;
    }
  });

export type WorkerEnv = z.output<typeof schema>;

/**
 * Reads and validates a worker's environment once (the `LONGRUN_*` settings the README lists);
 * throws `ConfigError` naming the bad variable.
 */
export function loadWorkerEnv(env: NodeJS.ProcessEnv = process.env): WorkerEnv {
  return parseEnv(schema, env);
}

/**
 * The worker options a `LONGRUN_*` environment sets, for `createWorker({ ...fromEnv(), jobs })`.
 * @example const worker = createWorker({ ...workerOptionsFromEnv(), jobs: [reportJob] })
 */
export function workerOptionsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Omit<WorkerOptions, 'jobs'> {
  const c = loadWorkerEnv(env);
  return {
    redisUrl: c.REDIS_URL,
    clusterNodes: c.LONGRUN_REDIS_CLUSTER_NODES,
    prefix: c.LONGRUN_PREFIX,
    maxTtlMs: c.LONGRUN_MAX_TTL_MS,
    tenantMaxBytes: c.LONGRUN_TENANT_MAX_BYTES,
    concurrency: c.LONGRUN_WORKER_CONCURRENCY,
    shards: c.LONGRUN_SHARDS,
    serveShards: c.LONGRUN_WORKER_SHARDS,
    types: c.LONGRUN_WORKER_TYPES,
    typeConcurrency: Object.fromEntries(c.LONGRUN_TYPE_CONCURRENCY),
    lockDurationMs: c.LONGRUN_LOCK_DURATION_MS,
    stalledIntervalMs: c.LONGRUN_STALLED_INTERVAL_MS,
    expiredGraceMs: c.LONGRUN_EXPIRED_GRACE_MS,
    maxStalledCount: c.LONGRUN_MAX_STALLED_COUNT,
    childRecheckMs: c.LONGRUN_CHILD_RECHECK_MS,
    runningMarkMs: c.LONGRUN_RUNNING_MARK_MS,
    maxResultBytes: c.LONGRUN_MAX_RESULT_BYTES,
    maxSteps: c.LONGRUN_MAX_STEPS,
    shutdownGraceMs: c.LONGRUN_SHUTDOWN_GRACE_MS,
    logLevel: c.LOG_LEVEL,
    logFormat: c.LONGRUN_LOG_FORMAT,
    metrics: { port: c.LONGRUN_METRICS_PORT, host: c.LONGRUN_METRICS_HOST },
    webhooks: {
      allow: c.LONGRUN_WEBHOOK_ALLOW,
      pollIntervalMs: c.LONGRUN_POLL_INTERVAL_MS,
      timeoutMs: c.LONGRUN_WEBHOOK_TIMEOUT_MS,
      perTenant: c.LONGRUN_WEBHOOK_TENANT_CONCURRENCY,
    },
    reconcile:
      c.LONGRUN_RECONCILE_INTERVAL_MS > 0
        ? {
            intervalMs: c.LONGRUN_RECONCILE_INTERVAL_MS,
            graceMs: c.LONGRUN_RECONCILE_GRACE_MS,
            batch: c.LONGRUN_RECONCILE_BATCH,
          }
        : false,
    faults: crashingFaults(c.LONGRUN_TEST_CRASH_AT),
  };
}
