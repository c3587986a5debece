import type { Redis } from 'ioredis';
import type { ChildOutcome, ChildTaskRequest } from '@longrun/core';
import {
  JobTypeDirectory,
  readMaxMemory,
  TaskEngine,
  tenantBudgetFor,
  TaskEvents,
  taskKeys,
  WebhookTargetPolicy,
  type DurableHost,
  type FaultHooks,
} from '@longrun/engine';

export interface ChildTasksOptions {
  connection: Redis;
  subscriber: Redis;
  prefix: string;
  maxTtlMs: number;
  /** Shards the tasks are spread over, as this worker knows it when the first child is made. */
  shards: () => number;
  /**
   * The tenant's storage budget children are held to (`WorkerOptions.tenantMaxBytes`); unset: a
   * quarter of Redis's `maxmemory` as the API computes it, read again at most once a minute.
   */
  tenantMaxBytes?: number | undefined;
  /** See `WorkerOptions.childRecheckMs` (default 60 s). */
  childRecheckMs?: number | undefined;
  /** Test seam (`WorkerOptions.faults`): none in production. */
  faults?: FaultHooks | undefined;
}

/** How long a budget read from Redis's `maxmemory` is used before it is read again. */
const BUDGET_READ_MS = 60_000;

/**
 * A worker's `DurableHost` (issue 29): durable handlers' child tasks are made, read and counted
 * through a `TaskEngine` of the worker's own, made at the first use (a worker whose handlers make
 * no children never has one), so a child is an ordinary task placed, queued and held to the
 * tenant's storage budget as a submit through the API would be (not to its open-task cap: a
 * parent waiting for room its own open children hold would never get it).
 */
export class ChildTasks implements DurableHost {
  private engine: TaskEngine | undefined;
  private budgetReadAt = -Infinity;
  private stepBudget = { bytes: 0, readAt: -Infinity };

  readonly childRecheckMs: number | undefined;

  constructor(private readonly opts: ChildTasksOptions) {
    this.childRecheckMs = opts.childRecheckMs;
  }

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
        faults: this.opts.faults,
      });
    }
    return this.engine;
  }

  async createChildren(
    tenant: string,
    parentId: string,
    tasks: readonly ChildTaskRequest[],
    key: string,
    signal?: AbortSignal,
  ): Promise<string[]> {
    const engine = this.tasks;
    await this.holdToBudget(engine);
    return engine.durable.createChildren(tenant, parentId, tasks, key, signal);
  }

  /** Sets the budget the children's creates are held to (the API's, see the options). */
  private async holdToBudget(engine: TaskEngine): Promise<void> {
    const given = this.opts.tenantMaxBytes;
    if (given !== undefined) {
      engine.setTenantMaxBytes(given);
      return;
    }
    if (Date.now() - this.budgetReadAt < BUDGET_READ_MS) return;
    engine.setTenantMaxBytes(tenantBudgetFor(await readMaxMemory(this.opts.connection)));
    this.budgetReadAt = Date.now();
  }

  /** The budget durable steps are held to (issue 40): the children's, read as they read it. */
  async storageBudget(): Promise<number> {
    const given = this.opts.tenantMaxBytes;
    if (given !== undefined) return given;
    if (Date.now() - this.stepBudget.readAt >= BUDGET_READ_MS) {
      const bytes = tenantBudgetFor(await readMaxMemory(this.opts.connection));
      this.stepBudget = { bytes, readAt: Date.now() };
    }
    return this.stepBudget.bytes;
  }

  childOutcomes(ids: readonly string[]): Promise<(ChildOutcome | null)[]> {
    return this.tasks.durable.childOutcomes(ids);
  }

  childMayStart(task: {
    id: string;
    tenant?: string | undefined;
    parentTaskId?: string | undefined;
  }): Promise<'run' | 'cancelled' | 'wait'> {
    return this.tasks.durable.childMayStart(task);
  }

  countEnded(parentId: string, ids: readonly string[]): Promise<number> {
    return this.tasks.durable.countEnded(parentId, ids);
  }

  childEnded(parentId: string, childId: string): Promise<void> {
    return this.tasks.durable.childEnded(parentId, childId);
  }

  async close(): Promise<void> {
    await this.engine?.close();
  }
}
