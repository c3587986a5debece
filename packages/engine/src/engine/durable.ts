import { randomUUID } from 'node:crypto';
import {
  DurableTaskError,
  isTaskId,
  isTerminal,
  type ChildOutcome,
  type ChildTaskRequest,
  type HandleFields,
  type TaskStatus,
} from '@longrun/core';
import type { ChildStart } from '../commands/index.js';
import type { DurableHost } from '../worker/durable-host.js';
import type { FaultHooks } from '../fault-hooks.js';
import { childSubmit, invalidChild } from './child-request.js';
import { notFound, type Invalid, type NotFound } from './outcomes.js';
import type { Shard } from './shard.js';
import type { ShardSet } from './shard-set.js';
import type { SubmitOptions } from './submit.js';
import type { TickOutcome } from './outcomes.js';

/** A batch's children are recorded on their parent this many at a time as they are made. */
const CHILDREN_PER_NOTE = 20;

/** Children a parent's cancel cancels at once. */
const CANCELS_AT_ONCE = 32;

/** `POST /v1/waitpoints/{id}`'s outcome. */
export type CompleteWaitpointOutcome =
  | { kind: 'completed'; taskId: string }
  | { kind: 'alreadyCompleted' }
  | { kind: 'timedOut' }
  | { kind: 'taskFinished'; status: TaskStatus }
  | { kind: 'overBudget'; usedBytes: number; maxBytes: number; retryAfterMs: number }
  | NotFound
  | Invalid;

export interface DurableDeps {
  shards: ShardSet;
  redis<T>(operation: () => Promise<T>): Promise<T>;
  submit(tenant: string, body: unknown, opts: SubmitOptions): Promise<TickOutcome>;
  cancel(tenant: string, id: string): Promise<unknown>;
  /** The tenant storage budget waitpoint data is held to (0: none), as submits are. */
  budgetBytes?: () => number;
  /** Test seam (`FaultHooks.afterChild`): none in production. */
  faults?: FaultHooks | undefined;
}

/**
 * The engine's side of durable tasks (issue 29): waitpoint completions (a door's call), and what
 * a worker's durable run asks of the whole task space (it implements `DurableHost`): child
 * tasks made as ordinary tasks on any shard, their outcomes, and a child's end counted in its
 * parent (on the parent's shard, so across shards this is two scripts, never one) with the
 * parent's job promoted when it was the last.
 */
export class DurableTasks implements DurableHost {
  constructor(private readonly deps: DurableDeps) {}

  /** Completes `tenant`'s waitpoint `wpId` (`<taskId>.<n>`) with `data`, and wakes its task. */
  async completeWaitpoint(
    tenant: string,
    wpId: string,
    body: unknown,
  ): Promise<CompleteWaitpointOutcome> {
    const dot = wpId.lastIndexOf('.');
    const taskId = wpId.slice(0, dot);
    const n = wpId.slice(dot + 1);
    if (dot < 0 || !isTaskId(taskId) || !/^[1-9][0-9]{0,5}$/.test(n)) return notFound;
    if (typeof body !== 'object' || body === null || Array.isArray(body) || !('data' in body)) {
      return {
        kind: 'invalid',
        status: 400,
        detail: 'The request body is invalid',
        errors: [{ path: 'data', message: 'Required: the data the waiting task receives' }],
      };
    }
    const shard = this.deps.shards.of(taskId);
    const maxBytes = this.deps.budgetBytes?.() ?? 0;
    const done = await this.deps.redis(() =>
      shard.durable.completeWaitpoint(
        tenant,
        taskId,
        `$waitpoint:${n}`,
        (body as { data: unknown }).data,
        `waitpoint ${wpId} completed`,
        randomUUID(),
        maxBytes,
      ),
    );
    if (done.kind === 'absent') return notFound;
    if (done.kind === 'completed') return { kind: 'alreadyCompleted' };
    if (done.kind === 'timedOut') return { kind: 'timedOut' };
    if (done.kind === 'refused') return { kind: 'taskFinished', status: done.current };
    if (done.kind === 'overBudget') return { ...done, maxBytes };
    if (done.wake) await this.promote(shard, taskId);
    return { kind: 'completed', taskId };
  }

  /**
   * Makes a batch's children in order, recording them on the parent a chunk at a time as they are
   * made (`note-children.lua`, issue 40): a cancel of the parent reads its children after its own
   * write, so it finds every child recorded before it; a chunk made after it is refused, and
   * cancelled here, and no more are made. Either side cancels each child.
   */
  async createChildren(
    tenant: string,
    parentId: string,
    tasks: readonly ChildTaskRequest[],
    key: string,
    signal?: AbortSignal,
  ): Promise<string[]> {
    const ids: string[] = [];
    let noted = 0;
    let expiresAt = Infinity;
    const note = async (): Promise<void> => {
      if (noted === ids.length) return;
      const chunk = ids.slice(noted);
      const shard = this.deps.shards.of(parentId);
      const done = await this.deps.redis(() =>
        shard.durable.noteChildren(parentId, key, noted, chunk, expiresAt),
      );
      if (done.kind !== 'ok') {
        // The parent was cancelled (or is gone) while it made them: they go with it.
        await this.cancelAll(tenant, chunk);
        throw new Error(
          `The parent task is ${done.kind === 'refused' ? done.current : 'gone'}: no more children made`,
        );
      }
      noted = ids.length;
      expiresAt = Infinity;
    };
    for (const [i, task] of tasks.entries()) {
      if (signal?.aborted) {
        // The run was stopped (its task cancelled, or timed out): what it made is recorded.
        await note();
        throw signal.reason instanceof Error ? signal.reason : new Error('The run was stopped');
      }
      let outcome: TickOutcome;
      try {
        // Checked as a submit (issue 40, item 12): a refusal is the handler's mistake, final.
        const { body, idempotencyKey } = childSubmit(task, i, parentId, key);
        outcome = await this.deps.submit(tenant, body, { idempotencyKey, parentTaskId: parentId });
      } catch (error) {
        await note();
        throw error;
      }
      if (outcome.kind === 'overBudget') {
        await note();
        // As a submit would be refused (429): the tenant's stored tasks take its budget.
        throw new DurableTaskError(
          'storage-budget',
          `Could not make child task ${i} (${task.type}): the tenant's storage budget is spent ` +
            `(${outcome.usedBytes} of ${outcome.maxBytes} bytes); room comes back in ${outcome.retryAfterMs} ms`,
          outcome.retryAfterMs,
        );
      }
      if (outcome.kind !== 'created' && outcome.kind !== 'replayed') {
        await note();
        if (outcome.kind === 'invalid' || outcome.kind === 'keyReused') {
          throw invalidChild(i, task.type, describe(outcome));
        }
        throw new Error(`Could not make child task ${i} (${task.type}): ${describe(outcome)}`);
      }
      ids.push(outcome.task.taskId);
      this.deps.faults?.afterChild?.();
      const { createdAt, ttlMs } = outcome.task;
      expiresAt = Math.min(expiresAt, Date.parse(createdAt) + ttlMs);
      if (ids.length - noted >= CHILDREN_PER_NOTE) await note();
    }
    await note();
    return ids;
  }

  async childOutcomes(ids: readonly string[]): Promise<(ChildOutcome | null)[]> {
    return Promise.all(
      ids.map(async (id) => {
        const view = await this.deps.redis(() => this.deps.shards.of(id).store.peek(id));
        return view && isTerminal(view.status) ? outcomeOf(view) : null;
      }),
    );
  }

  /** See `DurableHost.countEnded` (issue 40): read when a child may be gone, or a few at a time. */
  async countEnded(parentId: string, ids: readonly string[]): Promise<number> {
    let earliest = Infinity;
    await Promise.all(
      ids.map(async (id) => {
        const view = await this.deps.redis(() => this.deps.shards.of(id).store.peek(id));
        if (!view || isTerminal(view.status)) await this.childEnded(parentId, id);
        else earliest = Math.min(earliest, view.createdAt + view.ttlMs);
      }),
    );
    return earliest;
  }

  async childEnded(parentId: string, childId: string): Promise<void> {
    if (!isTaskId(parentId)) return;
    const shard = this.deps.shards.of(parentId);
    const note = await this.deps.redis(() => shard.durable.noteChildDone(parentId, childId));
    if (note === 'wake') await this.promote(shard, parentId);
  }

  /**
   * A cancelled task's open children are cancelled too, many at once (one by one, each cancelled
   * running child freed a slot a queued sibling took); a cancelled child is counted. `view` is
   * the task as read after the cancel's write: it holds every child recorded before it.
   */
  async cancelled(tenant: string, view: HandleFields): Promise<void> {
    if (view.parentTaskId) await this.childEnded(view.parentTaskId, view.id).catch(() => undefined);
    await this.cancelAll(tenant, view.childTaskIds ?? []);
  }

  /**
   * Whether a child about to run may (issue 40, items 3 and 4; `child-may-start.lua`): not once
   * its parent was cancelled (then it is cancelled here, and counted), and not before its parent
   * lists it (`wait`). One script on the parent, for tasks with a parent only.
   */
  async childMayStart(task: {
    id: string;
    tenant?: string | undefined;
    parentTaskId?: string | undefined;
  }): Promise<ChildStart> {
    const parent = task.parentTaskId;
    if (!parent || !isTaskId(parent)) return 'run';
    const shard = this.deps.shards.of(parent);
    const start = await this.deps.redis(() => shard.durable.childMayStart(parent, task.id));
    if (start !== 'cancelled') return start;
    // The child's own cancel (its tenant is its parent's); not written (Redis away): it waits.
    const tenant =
      task.tenant ?? (await this.deps.redis(() => shard.store.peek(parent)))?.tenant ?? '';
    const done = await this.deps.cancel(tenant, task.id).then(
      () => true,
      () => false,
    );
    return done ? 'cancelled' : 'wait';
  }

  /** Cancels `ids`, `CANCELS_AT_ONCE` at a time; a child that ended already is passed over. */
  private async cancelAll(tenant: string, ids: readonly string[]): Promise<void> {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < ids.length) {
        await this.deps.cancel(tenant, ids[next++]!).catch(() => undefined);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CANCELS_AT_ONCE, ids.length) }, lane));
  }

  /** Wakes a parked job (a delayed one); one that is not delayed runs anyway, or is gone. */
  private async promote(shard: Shard, taskId: string): Promise<void> {
    const owner = await this.deps.redis(() => shard.store.peek(taskId));
    if (!owner) return;
    await this.deps.redis(() => shard.jobs.promote(taskId, owner.type)).catch(() => false);
  }
}

function outcomeOf(view: HandleFields): ChildOutcome {
  const status = view.status as ChildOutcome['status'];
  if (status === 'completed') return { taskId: view.id, status, result: view.result ?? null };
  return { taskId: view.id, status, error: view.error ?? { message: `Task ${status}` } };
}

function describe(outcome: TickOutcome): string {
  if (outcome.kind === 'invalid')
    return outcome.errors.map((e) => `${e.path}: ${e.message}`).join('; ');
  if (outcome.kind === 'keyReused') {
    return 'idempotencyKey: used by this parent before for another child (type or input)';
  }
  return outcome.kind;
}
