import type { Redis } from 'ioredis';
import { coalesceWrites, createRedis, type FailureLog } from '@longrun/engine';
import type { WorkerOptions } from './options.js';

/**
 * The Redis connections a worker owns: made from its options (or copied from the caller's
 * connection), each reporting its failures once per kind (`FailureLog`), all closed together.
 */
export class Connections {
  private readonly owned: Redis[] = [];

  constructor(
    private readonly opts: Pick<WorkerOptions, 'connection' | 'redisUrl' | 'clusterNodes'>,
    private readonly logger: FailureLog,
  ) {}

  /** A new connection for `role`, closed with the others. */
  open(role: 'worker' | 'subscriber'): Redis {
    const conn = this.opts.connection
      ? duplicate(this.opts.connection, role)
      : createRedis(this.opts.redisUrl ?? 'redis://127.0.0.1:6379', role, {
          clusterNodes: this.opts.clusterNodes ?? [],
        });
    conn.on('error', (err: Error) => this.logger.warn({ err }, 'redis connection error'));
    conn.on('ready', () => this.logger.restored({}, 'redis connection restored'));
    this.owned.push(conn);
    return conn;
  }

  /** Quits every connection (`force`: disconnects at once, dropping what is in flight). */
  async close(force: boolean): Promise<void> {
    if (force) for (const conn of this.owned) conn.disconnect();
    else await Promise.allSettled(this.owned.map((conn) => conn.quit()));
  }
}

/** A copy of the caller's connection with what this role needs (BullMQ: no retry limit). */
function duplicate(connection: Redis, role: 'worker' | 'subscriber'): Redis {
  const copy = connection.duplicate({
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    connectionName: `longrun-${role}`,
  });
  return role === 'subscriber' ? copy : coalesceWrites(copy);
}
