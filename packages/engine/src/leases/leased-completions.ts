import type { Redis } from 'ioredis';
import { completeLeased, type LeasedOutcome } from '../commands/index.js';
import type { TaskKeys } from '../keys.js';
import { TurnBatch, type PendingCall } from '../turn-batch.js';

interface LeasedCompletion {
  id: string;
  result: unknown;
  /** BullMQ's lock key of the job, and the lease's token that must hold it. */
  lock: string;
  token: string;
}

/**
 * HTTP workers' completions of one shard (decision 68), a turn's at a time in one
 * `complete-leased` call on BullMQ's connection: each written only while its lease holds its
 * job's lock (`lost` otherwise), so the lease's check costs no round trip of its own, and the
 * job's finish sent after `written` runs after it in Redis.
 */
export class LeasedCompletions extends TurnBatch<LeasedCompletion, LeasedOutcome> {
  constructor(
    private readonly redis: Redis,
    private readonly keys: TaskKeys,
  ) {
    super(100);
  }

  complete(item: LeasedCompletion): PendingCall<LeasedOutcome> {
    return this.add(item);
  }

  protected send(items: LeasedCompletion[]): Promise<LeasedOutcome[]> {
    return completeLeased.run(this.redis, {
      keys: { outbox: this.keys.outbox },
      args: {
        channel: this.keys.eventsChannel,
        openPrefix: this.keys.tenantPrefix,
        updatedAt: Date.now(),
      },
      items: items.map(({ id, result, lock, token }) => ({
        keys: { task: this.keys.task(id), lock },
        args: { id, result: JSON.stringify(result) ?? 'null', token },
      })),
    });
  }
}
