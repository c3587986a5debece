import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { guard, readMaxMemory, tenantBudgetFor, type TaskEngine } from '@longrun/engine';

/** How often the default budget re-reads `maxmemory` (an operator may change it at run time). */
const REREAD_MS = 30_000;

/**
 * The default storage budget (`LONGRUN_TENANT_MAX_BYTES` unset, issue 27): a quarter of Redis's
 * `maxmemory`, read now and every 30 s, so one tenant cannot fill the store the others share.
 * Until a read succeeds (Redis away at start) the engine keeps the budget it was made with,
 * 256 MiB. Resolves after the first read, whatever it gave.
 * @example await followMaxMemory(engine, connection, logger, 2000)
 */
export async function followMaxMemory(
  engine: TaskEngine,
  connection: Redis | Cluster,
  logger: Logger,
  timeoutMs: number,
): Promise<NodeJS.Timeout> {
  let failed = false;
  const read = async () => {
    try {
      const maxmemory = await guard(() => readMaxMemory(connection), timeoutMs);
      const budget = tenantBudgetFor(maxmemory);
      failed = false;
      if (budget === engine.tenantMaxBytes) return;
      engine.setTenantMaxBytes(budget);
      logger.info(
        { tenantMaxBytes: budget, maxmemory },
        maxmemory > 0
          ? "storage budget per tenant: a quarter of Redis's maxmemory (LONGRUN_TENANT_MAX_BYTES sets another)"
          : 'storage budget per tenant: 256 MiB, Redis has no maxmemory (LONGRUN_TENANT_MAX_BYTES sets another)',
      );
    } catch (err) {
      // Once per outage, not every 30 s.
      if (!failed) {
        logger.warn(
          { err, tenantMaxBytes: engine.tenantMaxBytes },
          "could not read Redis's maxmemory; the storage budget per tenant stays as it is",
        );
      }
      failed = true;
    }
  };
  await read();
  return setInterval(() => void read(), REREAD_MS).unref();
}
