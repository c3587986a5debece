import { Cluster, Redis, type ClusterNode, type RedisOptions } from 'ioredis';
import { coalesceWrites } from './write-coalescing.js';

/**
 * What a connection is for. Producers (the API) fail fast when Redis is away; workers and
 * subscribers wait for it, as BullMQ requires (`maxRetriesPerRequest: null`).
 */
export type RedisRole = 'producer' | 'worker' | 'subscriber';

/** A standalone or cluster connection: ioredis gives both the same command API. */
export type RedisClient = Redis | Cluster;

export interface RedisConnectOptions {
  /** Per-command deadline for producers, so a slow Redis cannot pile up requests. */
  commandTimeoutMs?: number;
  connectTimeoutMs?: number;
  /**
   * Redis Cluster seed nodes (`host:port` or `redis[s]://[user:pass@]host:port`); when given, a
   * cluster client is made and `url` is ignored. Credentials and TLS come from the first node.
   */
  clusterNodes?: readonly string[];
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
  const producer: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: opts.commandTimeoutMs ?? 2000,
  };
  const perRole = role === 'producer' ? producer : { maxRetriesPerRequest: null };
  if (opts.clusterNodes?.length) {
    const nodes = opts.clusterNodes.map(parseNode);
    const first = new URL(withScheme(opts.clusterNodes[0] as string));
    const auth: RedisOptions = {
      ...(first.username ? { username: decodeURIComponent(first.username) } : {}),
      ...(first.password ? { password: decodeURIComponent(first.password) } : {}),
      ...(first.protocol === 'rediss:' ? { tls: {} } : {}),
    };
    const cluster = new Cluster(nodes, {
      enableOfflineQueue: role !== 'producer',
      clusterRetryStrategy: (times) => Math.min(times * 100, 1000),
      redisOptions: { ...base, ...perRole, ...auth },
    });
    // Typed as Redis for the callers: the command surface longrun uses is the same on both.
    return cluster as unknown as Redis;
  }
  const redis = new Redis(url, { ...base, ...perRole });
  // A producer serves many requests at once, a worker finishes many jobs at once: the commands
  // of one turn share one write. (A subscriber only listens.)
  return role === 'subscriber' ? redis : coalesceWrites(redis);
}

function withScheme(node: string): string {
  return /^rediss?:\/\//.test(node) ? node : `redis://${node}`;
}

function parseNode(node: string): ClusterNode {
  const url = new URL(withScheme(node));
  return { host: url.hostname, port: Number(url.port || 6379) };
}
