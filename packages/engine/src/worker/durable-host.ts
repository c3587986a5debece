import type { ChildOutcome, ChildTaskRequest } from '@longrun/core';

/**
 * What a durable task's run needs beyond its own record (issue 29): making child tasks (through
 * the engine, so they are ordinary tasks on any shard) and reading how they ended, and telling a
 * parent that its child ended. The worker process gives one (`LongrunWorker`); without one,
 * `ctx.runTask(s)` fails the task with `code: "children-unavailable"`.
 */
export interface DurableHost {
  /**
   * Makes `tasks` as children of `parentId`, of `tenant`, in order; the same `key` makes the same
   * tasks (idempotency keys), so a run that crashed before recording them makes none twice. Each
   * is recorded on the parent as it is made; once `signal` aborts (the run was stopped), no more.
   */
  createChildren(
    tenant: string,
    parentId: string,
    tasks: readonly ChildTaskRequest[],
    key: string,
    signal?: AbortSignal,
  ): Promise<string[]>;
  /** How each child is now, in order (`null`: not terminal yet, or gone). */
  childOutcomes(ids: readonly string[]): Promise<(ChildOutcome | null)[]>;
  /**
   * Reads `ids`, children of `parentId`, and counts in the parent those that ended (an end whose
   * count was lost: a worker died between the two) or are gone (no record: expired, deleted).
   * Returns the earliest expiry of those still open (`Infinity`: none).
   */
  countEnded(parentId: string, ids: readonly string[]): Promise<number>;
  /** How often a parent waiting on its children re-checks them at least (default 60 s). */
  readonly childRecheckMs?: number | undefined;
  /** Counts a child's end in its parent and wakes the parent when it was the last. */
  childEnded(parentId: string, childId: string): Promise<void>;
  /**
   * The tenant storage budget a step's result is held to (issue 40), the one children are held
   * to (0: none). Unset: steps are counted against it but never refused.
   */
  storageBudget?(): Promise<number>;
  /**
   * Whether a child task about to run may: `cancelled` when its parent was cancelled (the child
   * is cancelled too, and counted), `wait` while its parent has not listed it yet (give the job
   * back for a moment). One script on the parent, for tasks with a parent only.
   */
  childMayStart(task: {
    id: string;
    tenant?: string | undefined;
    parentTaskId?: string | undefined;
  }): Promise<'run' | 'cancelled' | 'wait'>;
}
