import type { Cluster, Redis } from 'ioredis';

/** A tenant's storage budget when Redis has no `maxmemory` (or it cannot be read): 256 MiB. */
export const TENANT_MAX_BYTES_WITHOUT_MAXMEMORY = 256 * 1024 * 1024;

/**
 * The default of `LONGRUN_TENANT_MAX_BYTES` (issue 27): a quarter of Redis's `maxmemory`, so one
 * tenant can never fill the store the others share (a full Redis refuses every tenant's submits
 * and the workers' completions), or 256 MiB when no `maxmemory` is set.
 * @example tenantBudgetFor(1024 ** 3) // 268435456
 */
export function tenantBudgetFor(maxmemory: number): number {
  return maxmemory > 0 ? Math.floor(maxmemory / 4) : TENANT_MAX_BYTES_WITHOUT_MAXMEMORY;
}

/**
 * Redis's `maxmemory` in bytes (0: none), from `INFO memory`: INFO is allowed where managed
 * services rename or refuse `CONFIG`. On a Cluster, the node the client asks.
 * @example await readMaxMemory(redis) // 0 on a Redis without a limit
 */
export async function readMaxMemory(redis: Redis | Cluster): Promise<number> {
  const info = await redis.info('memory');
  const match = /^maxmemory:(\d+)\s*$/m.exec(info);
  if (!match) throw new Error('INFO memory has no maxmemory field');
  return Number(match[1]);
}
