import { z } from 'zod';
import { clusterPrefixIssue, commaList, parseEnv, sharedEnvShape, splitList } from '@longrun/core';

const TENANT = /^[A-Za-z0-9_.-]{1,64}$/;
const MIN_KEY_LENGTH = 16;

/**
 * What is wrong with one `tenant:key` entry, or null. The entry is a secret: the message shows
 * the tenant and at most the first 4 characters of what may be a key.
 */
function apiKeyEntryFault(pair: string, owner: string): string | null {
  const at = pair.indexOf(':');
  const tenant = pair.slice(0, Math.max(at, 0));
  const key = pair.slice(at + 1);
  if (at < 1) {
    const seen = at < 0 ? pair : key;
    return `("${seen.slice(0, 4)}…", ${seen.length} characters) has no ${owner}`;
  }
  if (!TENANT.test(tenant)) {
    return `(${owner} "${tenant.slice(0, 64)}") has a ${owner} that is not 1-64 letters, digits, _ . -`;
  }
  if (key.length < MIN_KEY_LENGTH) {
    return `(${owner} "${tenant}") has a key of ${key.length} characters; it needs ${MIN_KEY_LENGTH} or more`;
  }
  return null;
}

/** `owner:key[,owner:key…]` read into key → owner (a tenant). */
function keyList(owner: 'tenant', example: string) {
  return z
    .string()
    .transform((raw, ctx) => {
      const keys = new Map<string, string>();
      const pairs = splitList(raw);
      for (const [i, pair] of pairs.entries()) {
        const fault = apiKeyEntryFault(pair, owner);
        if (fault) {
          ctx.addIssue({
            code: 'custom',
            message: `entry ${i + 1} of ${pairs.length} ${fault}: each entry must be ${owner}:key, e.g. ${example}:<a key of ${MIN_KEY_LENGTH}+ characters>, entries separated by commas`,
          });
          return z.NEVER;
        }
        const at = pair.indexOf(':');
        keys.set(pair.slice(at + 1), pair.slice(0, at));
      }
      return keys;
    })
    .optional();
}

const apiKeys = keyList('tenant', 'acme');

/**
 * Worker keys (key → worker name), and the job types each worker may register when its entry
 * lists them (`name:key:type1|type2`, issue 41): a worker name not in `types` may register any.
 */
export class WorkerKeys extends Map<string, string> {
  readonly types = new Map<string, ReadonlySet<string>>();
}

const TYPE_LIST = /^[A-Za-z0-9_.-]{1,100}(\|[A-Za-z0-9_.-]{1,100})*$/;

/** `name:key[:type1|type2][,…]` read into `WorkerKeys`; a key may not hold `:`. */
const workerKeys = z
  .string()
  .transform((raw, ctx) => {
    const keys = new WorkerKeys();
    /** Each worker's type list as read (''), so two entries of one worker agree. */
    const lists = new Map<string, string>();
    const entries = splitList(raw);
    for (const [i, entry] of entries.entries()) {
      const parts = entry.split(':');
      const list = parts.length > 2 ? parts.pop()! : undefined;
      const pair = parts.join(':');
      const fault =
        parts.length > 2
          ? `has more than one type list: each entry must be name:key or name:key:type1|type2`
          : list !== undefined && !TYPE_LIST.test(list)
            ? `(worker "${parts[0]}") has a type list that is not type names separated by |`
            : apiKeyEntryFault(pair, 'worker');
      const name = parts[0]!;
      const types = list === undefined ? '' : list.split('|').sort().join('|');
      const other = lists.has(name) && lists.get(name) !== types;
      lists.set(name, types);
      if (fault || other) {
        ctx.addIssue({
          code: 'custom',
          message: `entry ${i + 1} of ${entries.length} ${fault ?? `(worker "${name}") lists other types than an earlier entry of that worker`}: each entry must be worker:key or worker:key:type1|type2, e.g. py:<a key of ${MIN_KEY_LENGTH}+ characters>:py-wordcount, entries separated by commas`,
        });
        return z.NEVER;
      }
      keys.set(parts[1]!, name);
      if (list !== undefined) keys.types.set(name, new Set(list.split('|')));
    }
    return keys;
  })
  .optional();

/** `tenant=weight[,tenant=weight…]`: whole numbers 1–100. */
const tenantWeights = z
  .string()
  .default('')
  .transform((raw, ctx) => {
    const weights = new Map<string, number>();
    for (const pair of splitList(raw)) {
      const match = /^([A-Za-z0-9_.-]{1,64})=(\d{1,3})$/.exec(pair);
      const weight = Number(match?.[2]);
      if (!match?.[1] || weight < 1 || weight > 100) {
        ctx.addIssue({
          code: 'custom',
          message: `"${pair}" must be tenant=weight, a whole number from 1 to 100`,
        });
        return z.NEVER;
      }
      weights.set(match[1], weight);
    }
    return weights;
  });

const schema = z
  .object({
    ...sharedEnvShape,
    PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
    /** Unset: all interfaces (IPv6 and IPv4 where available, as Node's `listen` does). */
    HOST: z.string().optional(),
    /** `tenant:key[,tenant:key…]` */
    LONGRUN_API_KEYS: apiKeys,
    /**
     * `name:key[:type1|type2][,…]`: keys of HTTP workers (`/v1/worker/*`), never a tenant's; a
     * worker key cannot use the task routes and a tenant key cannot use the worker routes
     * (`403`). With a type list, the worker registers only those types (`403` for another).
     */
    LONGRUN_WORKER_KEYS: workerKeys,
    /** Most job types one worker key may own (register). */
    LONGRUN_WORKER_MAX_TYPES: z.coerce.number().int().min(1).max(10_000).default(50),
    /** Requests per second per worker key on `/v1/worker/*`, per API process; 0: no limit. */
    LONGRUN_WORKER_RATE_LIMIT_RPS: z.coerce.number().int().min(0).default(200),
    /** How long an HTTP worker's lease lasts without a heartbeat (each heartbeat renews it). */
    LONGRUN_WORKER_LEASE_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
    /** Where a development key is kept (`dev-api-key`) when LONGRUN_API_KEYS is unset. */
    LONGRUN_DATA_DIR: z.string().min(1).default('.data'),
    /** Longest a request waits on Redis before answering 503. */
    LONGRUN_REDIS_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(2000),
    LONGRUN_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
    /** Requests per second per tenant (all routes under /v1); 0 turns the limit off. */
    LONGRUN_RATE_LIMIT_RPS: z.coerce.number().int().min(0).default(100),
    /** Keys for operator pages (`/admin/queues`), comma-separated; none: the pages are off. */
    LONGRUN_ADMIN_KEYS: commaList().refine(
      (keys) => keys.every((k) => k.length >= 16),
      'each admin key needs 16+ characters',
    ),
    /** The queue dashboard only shows unless this is `false`. */
    LONGRUN_ADMIN_READ_ONLY: z
      .enum(['true', 'false'])
      .default('true')
      .transform((v) => v === 'true'),
    /** Non-terminal tasks one tenant may have at once; 0 turns the cap off. */
    LONGRUN_MAX_OPEN_TASKS: z.coerce.number().int().min(0).default(10_000),
    /**
     * Long-lived requests (event streams, MCP tasks/result, A2A streams) one tenant may hold open
     * on one API process; 0 = no cap. Unset: 100, or a quarter of LONGRUN_MAX_STREAMS if lower.
     */
    LONGRUN_TENANT_MAX_STREAMS: z.coerce.number().int().min(0).optional(),
    /**
     * Long-lived requests one API process holds open for all tenants; 0 = no cap. Unset: half
     * the process's open-file limit (`ulimit -n`), at most 10 000.
     */
    LONGRUN_MAX_STREAMS: z.coerce.number().int().min(0).optional(),
    /** Schedules (recurring tasks) one tenant may have. */
    LONGRUN_MAX_SCHEDULES: z.coerce.number().int().min(1).max(10_000).default(100),
    /** The shortest schedule period (`everyMs`, and between two runs of a cron), in ms. */
    LONGRUN_SCHEDULE_MIN_EVERY_MS: z.coerce.number().int().min(100).max(86_400_000).default(1000),
    /** `on`: tenants take turns at the workers (decision 33); `off`: one queue in arrival order. */
    LONGRUN_FAIR_SHARE: z.enum(['on', 'off']).default('on'),
    /** A tenant's share of the workers against others' (default 1 each). */
    LONGRUN_TENANT_WEIGHTS: tenantWeights,
    /**
     * The job type (A2A skill) a text-only A2A message names none starts; it must declare
     * `textInput` when it registers. Unset: such a message is ContentTypeNotSupportedError.
     */
    LONGRUN_A2A_DEFAULT_SKILL: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,200}$/, 'must be a job type name')
      .optional(),
    /**
     * `true`: the MCP door's conformance profile, for running the official MCP conformance suite
     * (its fixture tools, prompts, resources, completion and logging). Never in production.
     */
    LONGRUN_MCP_CONFORMANCE: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
  })
  .refine((c) => clusterPrefixIssue(c) === null, {
    path: ['LONGRUN_PREFIX'],
    message: 'must contain a {hash tag} on Redis Cluster, e.g. {longrun}',
  })
  .refine((c) => c.LONGRUN_DEFAULT_TTL_MS <= c.LONGRUN_MAX_TTL_MS, {
    path: ['LONGRUN_DEFAULT_TTL_MS'],
    message: 'must not exceed LONGRUN_MAX_TTL_MS',
  })
  .refine(
    (c) => ![...(c.LONGRUN_WORKER_KEYS?.keys() ?? [])].some((k) => c.LONGRUN_API_KEYS?.has(k)),
    {
      path: ['LONGRUN_WORKER_KEYS'],
      message: 'must not repeat a key of LONGRUN_API_KEYS: a worker key is never a tenant key',
    },
  )
  .refine((c) => c.NODE_ENV !== 'production' || (c.LONGRUN_API_KEYS?.size ?? 0) > 0, {
    path: ['LONGRUN_API_KEYS'],
    message: 'is required when NODE_ENV=production',
  });

export type ApiConfig = z.output<typeof schema>;

/** Reads and validates the API's environment once; throws ConfigError on a bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  return parseEnv(schema, env);
}
