import type { Redis } from 'ioredis';
import {
  checkChildren,
  childMayStart,
  completeWaitpoint,
  keepTask,
  noteChildDone,
  noteChildren,
  recordStep,
  timeOutWaitpoint,
  type ChildNote,
  type ChildrenCheck,
  type ChildStart,
  type ChildrenNote,
  type StepOutcome,
  type WaitpointOutcome,
  type WaitpointTimeout,
} from './commands/index.js';
import type { TaskKeys } from './keys.js';

/** What a step writes besides its result: its message, what the task waits for, new children. */
export interface StepWrite {
  /** The step's name; '' writes no step (only the wait). */
  name: string;
  /** Its result, as JSON. */
  value: string;
  /** A sleep's end: the step is shown `waiting` until then (issue 40). */
  sleepUntil?: number | undefined;
  /** The sleep the run went on past: its entry is completed now. */
  ended?: string | undefined;
  /** The most `ctx.step` calls the task records (`LONGRUN_MAX_STEPS`; 0 or unset: no cap). */
  maxSteps?: number | undefined;
  /** The tenant's storage budget the step is held to (0 or unset: none). */
  maxBytes?: number | undefined;
  /** The event's statusMessage ('' keeps it; a children wait makes its own). */
  message?: string | undefined;
  /** What the task waits for when it parks next: 'children', 'wp:<step>', or '' (nothing). */
  wait?: string | undefined;
  /** Child task ids to append to the record's `childTaskIds`. */
  children?: readonly string[] | undefined;
}

/**
 * A durable task's writes (issue 29): its steps' results, waitpoint completions and the count of
 * its children that ended, each one script on the task's record (so on the task's shard and hash
 * tag). The reads come with the task's start (`TaskStore.start`).
 */
export class DurableStore {
  constructor(
    private readonly redis: Redis,
    readonly keys: TaskKeys,
  ) {}

  /** Records a step once (one round trip); an earlier record's result wins (`exists`). */
  recordStep(id: string, step: StepWrite): Promise<StepOutcome> {
    return recordStep.run(this.redis, {
      keys: { task: this.keys.task(id), outbox: this.keys.outbox },
      args: {
        channel: this.keys.eventsChannel,
        id,
        name: step.name,
        value: step.value,
        now: Date.now(),
        message: step.message ?? '',
        wait: step.wait ?? '',
        children: step.children?.length ? JSON.stringify(step.children) : '',
        sleepUntil: step.sleepUntil ?? '',
        ended: step.ended ?? '',
        maxSteps: step.maxSteps ?? 0,
        openPrefix: this.keys.tenantPrefix,
        maxBytes: step.maxBytes ?? 0,
      },
    });
  }

  /**
   * Stores a waitpoint's data (`tenant`'s task only), once. `op`: the call's own id, so that a
   * second run of it by Redis answers as the first (`TaskStore.transition`'s `op`). `maxBytes`:
   * the tenant's storage budget the data is held to (0: none).
   */
  completeWaitpoint(
    tenant: string,
    id: string,
    name: string,
    data: unknown,
    message: string,
    op = '',
    maxBytes = 0,
  ): Promise<WaitpointOutcome> {
    return completeWaitpoint.run(this.redis, {
      keys: { task: this.keys.task(id), outbox: this.keys.outbox },
      args: {
        tenant,
        channel: this.keys.eventsChannel,
        id,
        name,
        data: JSON.stringify(data ?? null),
        now: Date.now(),
        message,
        op,
        openPrefix: this.keys.tenantPrefix,
        maxBytes,
      },
    });
  }

  /**
   * Records that waitpoint `name` (`$waitpoint:<n>`) timed out, as its one outcome (issue 40),
   * unless its data came first (`completed`, with the data).
   */
  timeOutWaitpoint(id: string, name: string, message: string): Promise<WaitpointTimeout> {
    return timeOutWaitpoint.run(this.redis, {
      keys: { task: this.keys.task(id), outbox: this.keys.outbox },
      args: { channel: this.keys.eventsChannel, id, name, now: Date.now(), message },
    });
  }

  /** Keeps the task's record until `keepUntil` (ms) at least: its expiry only moves later. */
  keep(id: string, keepUntil: number): Promise<'ok' | 'missing'> {
    return keepTask.run(this.redis, {
      keys: { task: this.keys.task(id) },
      args: { keepUntil: Math.ceil(keepUntil), now: Date.now() },
    });
  }

  /** Counts a child's end in its parent, once; `wake` when the parent is to run again. */
  noteChildDone(parentId: string, childId: string): Promise<ChildNote> {
    return noteChildDone.run(this.redis, {
      keys: { task: this.keys.task(parentId) },
      args: { child: childId },
    });
  }

  /**
   * Records children of batch `batch` on their parent as they are made (`ids` from index `from`
   * of the batch, the earliest of whose expiries is `expiresAt`): `refused` once it is cancelled.
   */
  noteChildren(
    parentId: string,
    batch: string,
    from: number,
    ids: readonly string[],
    expiresAt: number,
  ): Promise<ChildrenNote> {
    return noteChildren.run(this.redis, {
      keys: { task: this.keys.task(parentId) },
      args: { batch, from, ids: JSON.stringify(ids), expiresAt },
    });
  }

  /**
   * Whether every child of the parent ended (O(1)), saying it waits on them (an event only when
   * that changes); `expiresAt` notes the earliest expiry of its open children, read just now.
   */
  checkChildren(parentId: string, expiresAt?: number): Promise<ChildrenCheck> {
    return checkChildren.run(this.redis, {
      keys: { task: this.keys.task(parentId), outbox: this.keys.outbox },
      args: {
        channel: this.keys.eventsChannel,
        id: parentId,
        now: Date.now(),
        expiresAt: expiresAt === undefined || !Number.isFinite(expiresAt) ? '' : expiresAt,
      },
    });
  }

  /** Whether child `childId` may start, from its parent's record (`child-may-start.lua`). */
  childMayStart(parentId: string, childId: string): Promise<ChildStart> {
    return childMayStart.run(this.redis, {
      keys: { parent: this.keys.task(parentId) },
      args: { child: childId },
    });
  }
}
