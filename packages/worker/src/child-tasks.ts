import type { Redis } from 'ioredis';
import type { ChildOutcome } from '@longrun/core';
import {
  JobTypeDirectory,
  TaskEngine,
  TaskEvents,
  taskKeys,
  WebhookTargetPolicy,
  type DurableHost,
} from '@longrun/engine';

export interface ChildTasksOptions {
  connection: Redis;
  subscriber: Redis;
  prefix: string;
  maxTtlMs: number;
  /** Shards the tasks are spread over, as this worker knows it when the first child is made. */
  shards: () => number;
}

/**
 * A worker's `DurableHost` (issue 29): durable handlers' child tasks are made, read and counted
 * through a `TaskEngine` of the worker's own, made at the first use (a worker whose handlers make
 * no children never has one), so a child is an ordinary task placed, capped and queued as a
 * submit through the API would be.
 */
export class ChildTasks implements DurableHost {
  private engine: TaskEngine | undefined;

  constructor(private readonly opts: ChildTasksOptions) {}

  private get tasks(): TaskEngine {
    if (!this.engine) {
      const { connection, subscriber, prefix, maxTtlMs } = this.opts;
      this.engine = new TaskEngine({
        connection,
        events: new TaskEvents(subscriber, taskKeys(prefix).eventsChannel),
        prefix,
        shards: this.opts.shards(),
        types: new JobTypeDirectory({ connection, prefix, refreshMs: 0 }),
        webhookPolicy: new WebhookTargetPolicy(),
        pollIntervalMs: 5000,
        // A child lives as long as the longest task may (its parent waits on it).
        defaultTtlMs: maxTtlMs,
        maxTtlMs,
        redisTimeoutMs: 10_000,
        maxOpenTasks: 0,
      });
    }
    return this.engine;
  }

  createChildren(
    tenant: string,
    parentId: string,
    tasks: readonly { type: string; input: Record<string, unknown> }[],
    key: string,
  ): Promise<string[]> {
    return this.tasks.durable.createChildren(tenant, parentId, tasks, key);
  }

  childOutcomes(ids: readonly string[]): Promise<(ChildOutcome | null)[]> {
    return this.tasks.durable.childOutcomes(ids);
  }

  childEnded(parentId: string, childId: string): Promise<void> {
    return this.tasks.durable.childEnded(parentId, childId);
  }

  async close(): Promise<void> {
    await this.engine?.close();
  }
}
