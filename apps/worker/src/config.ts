import { z } from 'zod';
import { parseEnv, sharedEnvShape } from '@longrun/core';

const schema = z.object({
  ...sharedEnvShape,
  LONGRUN_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(8),
  /** 0 picks a free port (handy when several workers share a host). */
  LONGRUN_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9464),
  LONGRUN_METRICS_HOST: z.string().default('0.0.0.0'),
  LONGRUN_LOCK_DURATION_MS: z.coerce.number().int().min(500).optional(),
  LONGRUN_STALLED_INTERVAL_MS: z.coerce.number().int().min(500).optional(),
  LONGRUN_MAX_STALLED_COUNT: z.coerce.number().int().min(0).max(100).default(3),
  LONGRUN_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
});

export type WorkerConfig = z.output<typeof schema>;

/** Reads and validates the worker's environment once; throws ConfigError on a bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  return parseEnv(schema, env);
}
