import { z } from 'zod';

/** A process configuration that failed validation; `main` prints it and exits 1. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * A comma-separated list variable: items trimmed, empty ones dropped; unset is `[]`.
 * @example commaList().parse(' a, b,,c ') // ['a', 'b', 'c']
 */
export function commaList() {
  return z
    .string()
    .default('')
    .transform((s) => splitList(s));
}

/** Splits a comma-separated list, trimming items and dropping empty ones. */
export function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

/** Environment values shared by the API and the worker. */
export const sharedEnvShape = {
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .default('redis://127.0.0.1:6379'),
  /** Redis Cluster seed nodes, comma-separated; when set, REDIS_URL is not used. */
  LONGRUN_REDIS_CLUSTER_NODES: commaList(),
  LONGRUN_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.{}-]{1,64}$/, 'letters, digits, _ . - { } only (at most 64)')
    .default('longrun'),
  /**
   * Shards the tasks are spread over (decision 37): each its own hash tag, so the primaries of a
   * Redis Cluster share the work. Set on the API processes; workers serve every shard announced.
   */
  LONGRUN_SHARDS: z.coerce.number().int().min(1).max(1024).default(1),
  LONGRUN_DEFAULT_TTL_MS: z.coerce.number().int().min(1000).default(86_400_000),
  LONGRUN_MAX_TTL_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(7 * 86_400_000),
  /**
   * A result whose JSON is longer fails its task (`result-too-large`); 0: no cap. Read by
   * workers (SDK runs) and by the API (HTTP workers' completions).
   */
  LONGRUN_MAX_RESULT_BYTES: z.coerce.number().int().min(0).max(536_870_912).default(2_097_152),
  /**
   * The most `ctx.step` calls a durable task records (issue 40; sleeps, waits and children do
   * not count); past it the step fails the task with `too-many-steps`. 0: no cap. One of the
   * settings API and workers share: the workers, which record the steps, enforce it.
   */
  LONGRUN_MAX_STEPS: z.coerce.number().int().min(0).max(1_000_000).default(1000),
  /**
   * Bytes one tenant's stored tasks may take (records, inputs, results, answers); 0 = no
   * budget. Unset: a quarter of Redis's `maxmemory`, 256 MiB without one (`tenantBudgetFor`).
   * Read by the API (submits) and by workers (durable tasks' children).
   */
  LONGRUN_TENANT_MAX_BYTES: z.coerce.number().int().min(0).optional(),
  /** Suggested poll interval on handles (also used in webhook payloads). */
  LONGRUN_POLL_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(5000),
  /** Webhook targets allowed despite being private or loopback: hosts, IPs or CIDRs. */
  LONGRUN_WEBHOOK_ALLOW: commaList(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `auto`: readable lines on a terminal (unless NODE_ENV=production), JSON otherwise. */
  LONGRUN_LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  NODE_ENV: z.string().default('development'),
  /**
   * Test hook, never for production: the process kills itself (SIGKILL) at this point, so the
   * tests can stop it exactly between two writes: `after-create` (API: a task's record is
   * written, its job not yet), `after-park` (worker: a job is parked, its `input_required` not
   * yet recorded), `after-child` (worker: a durable parent's child is made, not yet listed).
   */
  LONGRUN_TEST_CRASH_AT: z.enum(['after-create', 'after-park', 'after-child']).optional(),
};

/**
 * On Redis Cluster every key of a task must live in one hash slot (Lua scripts touch several):
 * the prefix needs a `{hash tag}`.
 */
export function clusterPrefixIssue(env: {
  LONGRUN_REDIS_CLUSTER_NODES: string[];
  LONGRUN_PREFIX: string;
}): string | null {
  if (env.LONGRUN_REDIS_CLUSTER_NODES.length === 0 || /\{[^{}]+\}/.test(env.LONGRUN_PREFIX)) {
    return null;
  }
  return 'must contain a {hash tag} on Redis Cluster, e.g. {longrun}';
}

/**
 * Parses an environment with a zod schema, once, at start-up; throws a ConfigError naming every
 * bad variable. Empty strings count as unset.
 * @example parseEnv(z.object({ PORT: z.coerce.number() }), process.env)
 */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: Readonly<Record<string, string | undefined>>,
): z.output<S> {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
