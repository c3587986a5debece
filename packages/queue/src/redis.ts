import { Redis, type RedisOptions } from 'ioredis';

/**
 * What a connection is for. Producers (the API) fail fast when Redis is away; workers and
 * subscribers wait for it, as BullMQ requires (`maxRetriesPerRequest: null`).
 */
export type RedisRole = 'producer' | 'worker' | 'subscriber';

export interface RedisConnectOptions {
  /** Per-command deadline for producers, so a slow Redis cannot pile up requests. */
  commandTimeoutMs?: number;
  connectTimeoutMs?: number;
}

/**
 * Opens an ioredis connection configured for its role. The caller owns it and must `quit()` it.
 * @example const redis = createRedis('redis://127.0.0.1:6379', 'producer')
 */
export function createRedis(url: string, role: RedisRole, opts: RedisConnectOptions = {}): Redis {
  const base: RedisOptions = {
    connectionName: `longrun-${role}`,
    connectTimeout: opts.connectTimeoutMs ?? 2000,
    // Reconnect forever, backing off to 1 s: the service recovers by itself when Redis returns.
    retryStrategy: (times) => Math.min(times * 100, 1000),
  };
  if (role === 'producer') {
    return new Redis(url, {
      ...base,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: opts.commandTimeoutMs ?? 2000,
    });
  }
  return new Redis(url, { ...base, maxRetriesPerRequest: null });
}
