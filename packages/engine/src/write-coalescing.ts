import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';

const corked = new WeakSet<Socket>();

/**
 * Makes `redis` send every command issued in one event-loop turn in a single socket write: the
 * first command of a turn corks the socket and a `setImmediate` uncorks it, so Node flushes all
 * of them with one `writev`. Commands, their order and their replies are unchanged; only the
 * number of system calls falls (one per turn instead of one per command). ioredis' own
 * auto-pipelining batches the same way but builds a `Pipeline` per batch, which copies every
 * script defined on the connection (BullMQ defines sixty-odd), and measured no gain here.
 * `createRedis` applies it to producer (API) and worker connections. Standalone connections only
 * (a Cluster routes commands to connections of its own).
 * See docs/decisions.md #19.
 * @example const redis = coalesceWrites(new Redis(url))
 */
export function coalesceWrites(redis: Redis): Redis {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, stream) => {
    // `stream` is set for commands queued in a pipeline, which writes them itself.
    const socket = redis.stream as Socket | undefined;
    if (!stream && socket && redis.status === 'ready' && !corked.has(socket)) {
      corked.add(socket);
      socket.cork();
      setImmediate(() => {
        corked.delete(socket);
        socket.uncork();
      });
    }
    return send(command, stream);
  };
  return redis;
}
