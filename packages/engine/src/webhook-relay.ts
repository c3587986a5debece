import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { TaskWorkerLogger } from './worker/job-data.js';

const GROUP = 'relay';

export interface OutboxRelayOptions {
  /** A connection of its own: the relay blocks on it (XREADGROUP … BLOCK). */
  connection: Redis;
  /** The shard's outbox stream, where status changes land with the change itself. */
  outbox: string;
  /** The delivery queue entries are moved into. */
  queue: Queue;
  /** Delivery attempts per entry. */
  attempts: number;
  /** Unique per process; names this relay in the outbox's consumer group. */
  consumerName: string;
  /** A consumer idle this long with nothing pending is a relay that died (removed). */
  deadConsumerMs: number;
  logger: TaskWorkerLogger;
}

/**
 * Moves a shard's outbox entries into the webhook delivery queue, through a consumer group so a
 * relay that dies leaves its entries to another (reclaimed after 30 s). Job ids are the entry's
 * task and event, so a relay that crashes after adding but before acking adds nothing twice.
 */
export class OutboxRelay {
  private running = false;
  private loop: Promise<void> | undefined;

  constructor(private readonly opts: OutboxRelayOptions) {}

  /** Makes the consumer group if needed, then relays until `stop`. */
  async start(): Promise<void> {
    await this.createGroup();
    this.running = true;
    this.loop = this.relay();
  }

  /** Stops relaying once the read in progress ends (at most a second). */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** Leaves the consumer group if nothing is pending for this relay (a crashed one is pruned). */
  leave(): Promise<void> {
    return this.pruneConsumers(0, true);
  }

  /**
   * Makes the outbox's consumer group (and the stream) unless it is there. Reading from the start
   * of the stream: entries a task script added before the group existed (Redis came back empty,
   * then a status change) are relayed too.
   */
  private async createGroup(): Promise<void> {
    try {
      await this.opts.connection.xgroup('CREATE', this.opts.outbox, GROUP, '0', 'MKSTREAM');
    } catch (error) {
      if (!/BUSYGROUP/.test((error as Error).message)) throw error;
    }
  }

  /**
   * Removes consumers of the group with nothing pending that have been idle for `idleMs` (this
   * relay's own only when `self`): every restart names a new consumer, so without this the
   * group would collect one per process start for ever.
   */
  async pruneConsumers(idleMs: number, self = false): Promise<void> {
    const redis = this.opts.connection;
    const outbox = this.opts.outbox;
    const consumers = (await redis.xinfo('CONSUMERS', outbox, GROUP)) as (string | number)[][];
    for (const flat of consumers) {
      const info = Object.fromEntries(
        Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i], flat[2 * i + 1]]),
      ) as { name: string; pending: number; idle: number };
      const mine = info.name === this.opts.consumerName;
      if (mine !== self || info.pending > 0 || info.idle < idleMs) continue;
      await redis.xgroup('DELCONSUMER', outbox, GROUP, info.name);
    }
  }

  /** Moves outbox entries into the delivery queue; reclaims entries a dead relay left pending. */
  private async relay(): Promise<void> {
    const redis = this.opts.connection;
    const outbox = this.opts.outbox;
    let lastClaim = 0;
    while (this.running) {
      try {
        if (Date.now() - lastClaim > 10_000) {
          lastClaim = Date.now();
          const [, claimed] = (await redis.xautoclaim(
            outbox,
            GROUP,
            this.opts.consumerName,
            30_000,
            '0-0',
            'COUNT',
            100,
          )) as [string, [string, string[]][]];
          await this.forward(claimed);
          await this.pruneConsumers(this.opts.deadConsumerMs);
        }
        const reply = (await redis.xreadgroup(
          'GROUP',
          GROUP,
          this.opts.consumerName,
          'COUNT',
          100,
          'BLOCK',
          1000,
          'STREAMS',
          outbox,
          '>',
        )) as [string, [string, string[]][]][] | null;
        await this.forward(reply?.[0]?.[1] ?? []);
      } catch (error) {
        if (!this.running) break;
        if (/^NOGROUP\b/.test((error as Error).message)) {
          // Redis lost its data (a failover to an empty replica, a restart without persistence):
          // the group went with it. Made again, the relay goes on; until then no webhook moves.
          const made = await this.createGroup().then(
            () => true,
            (err: unknown) => {
              this.opts.logger.warn({ err }, 'webhook outbox group not made again yet; retrying');
              return false;
            },
          );
          if (made) {
            this.opts.logger.info(
              { outbox },
              'webhook outbox group was gone (Redis lost its data): made again',
            );
            continue;
          }
        } else {
          this.opts.logger.warn({ err: (error as Error).message }, 'webhook relay error; retrying');
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  private async forward(entries: [string, string[]][]): Promise<void> {
    if (entries.length === 0) return;
    const attempts = this.opts.attempts;
    await this.opts.queue.addBulk(
      entries.map(([, flat]) => {
        const fields = Object.fromEntries([0, 2].map((i) => [flat[i], flat[i + 1]]));
        const taskId = fields.task ?? '';
        const eventId = fields.event ?? '';
        return {
          name: 'deliver',
          data: { taskId, eventId },
          opts: {
            jobId: `${taskId}_${eventId}`,
            attempts,
            backoff: { type: 'exponential', delay: 1000 },
            removeOnComplete: true,
            removeOnFail: { age: 7 * 86_400 },
          },
        };
      }),
    );
    const ids = entries.map(([id]) => id);
    await this.opts.connection
      .multi()
      .xack(this.opts.outbox, GROUP, ...ids)
      .xdel(this.opts.outbox, ...ids)
      .exec();
  }
}
