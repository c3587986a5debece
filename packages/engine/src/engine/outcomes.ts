import type { A2APushTarget, Schedule, TaskHandle, TaskResult, TaskStatus } from '@longrun/core';

/**
 * What the engine's calls answer. Each door (HTTP, MCP, A2A) maps these to its own responses;
 * only Redis being unreachable is thrown (`StoreUnavailableError`, `StoreFullError`).
 */

export interface FieldError {
  path: string;
  message: string;
}

/** No such task for this tenant: another tenant's task is reported exactly like a missing one. */
export interface NotFound {
  kind: 'notFound';
}

/** The request is not acceptable: 400 for its shape, 422 for content that does not match. */
export interface Invalid {
  kind: 'invalid';
  status: 400 | 422;
  detail: string;
  errors: FieldError[];
}

/** The task is in a status the call cannot act on. */
export interface Conflict {
  kind: 'conflict';
  /**
   * `terminal`: finished already; `notTerminal`: not finished yet; `notAwaitingInput`;
   * `questionChanged`: the task asks another question than the one the answer was checked against.
   */
  reason: 'terminal' | 'notTerminal' | 'notAwaitingInput' | 'questionChanged';
  status: TaskStatus;
}

export type SubmitOutcome =
  | { kind: 'created'; task: TaskHandle }
  /** An `Idempotency-Key` seen before with the same body: the first task's handle. */
  | { kind: 'replayed'; task: TaskHandle }
  | Invalid
  /** The tenant's open-task cap is reached. */
  | { kind: 'full'; openTasks: number; cap: number }
  /** The tenant's stored tasks take its storage budget; the oldest frees bytes in `retryAfterMs`. */
  | { kind: 'overBudget'; usedBytes: number; maxBytes: number; retryAfterMs: number }
  /** The key was used with another body. */
  | { kind: 'keyReused' }
  /** The key's task is being created or removed right now: retry shortly. */
  | { kind: 'keyInFlux' };

/**
 * What a schedule's tick submit answers (`TaskEngine.submitTick`): a submit's outcome, or
 * `scheduleGone`: the schedule was deleted before the create ran, so the tick made no task.
 */
export type TickOutcome = SubmitOutcome | { kind: 'scheduleGone' };

export type GetOutcome = { kind: 'found'; task: TaskHandle } | NotFound;

export type ResultOutcome = { kind: 'finished'; result: TaskResult } | NotFound | Conflict;

export type CancelOutcome = { kind: 'cancelled'; task: TaskHandle } | NotFound | Conflict;

export type AnswerOutcome =
  | {
      kind: 'answered';
      task: TaskHandle;
      /** How the parked job was woken; `deferred`: it could not be now, the reconciler will. */
      wake: 'woken' | 'requeued' | 'deferred';
    }
  | NotFound
  | Conflict
  | Invalid;

export type ForgetOutcome = { kind: 'forgotten' } | NotFound | Conflict;

export type ListOutcome =
  { kind: 'page'; tasks: TaskHandle[]; nextCursor: string | null } | Invalid;

/** A task's A2A push notification configs (none, one or several). */
export type PushConfigOutcome = { kind: 'found'; configs: A2APushTarget[] } | NotFound;

export type SetPushConfigOutcome =
  | { kind: 'set'; config: A2APushTarget }
  | NotFound
  | Invalid
  /** The task has `max` configs already, none of this id. */
  | { kind: 'pushFull'; max: number }
  /** The task has a longrun webhook (its submit's `callback`), which a push config cannot replace. */
  | { kind: 'hasCallback' };

/** `absent`: the task has no config of that id (deleting is idempotent). */
export type DeletePushConfigOutcome = { kind: 'deleted' | 'absent' } | NotFound;

export type CreateScheduleOutcome =
  | { kind: 'created'; schedule: Schedule }
  /** The Idempotency-Key was used before with this body: the schedule it created. */
  | { kind: 'replayed'; schedule: Schedule }
  /** The Idempotency-Key was used before with another body. */
  | { kind: 'keyReused' }
  /** The Idempotency-Key's schedule is being removed: retry. */
  | { kind: 'keyInFlux' }
  | Invalid
  /** The tenant has as many schedules as it may (`cap`). */
  | { kind: 'tooManySchedules'; schedules: number; cap: number };

/** A schedule of another tenant is `notFound`, exactly like a missing one. */
export type GetScheduleOutcome = { kind: 'found'; schedule: Schedule } | NotFound;

export type ScheduleListOutcome = { kind: 'list'; schedules: Schedule[] };

export type DeleteScheduleOutcome = { kind: 'deleted' } | NotFound;

export const notFound: NotFound = { kind: 'notFound' };

export function invalid(status: 400 | 422, detail: string, errors: FieldError[]): Invalid {
  return { kind: 'invalid', status, detail, errors };
}

export function conflict(reason: Conflict['reason'], status: TaskStatus): Conflict {
  return { kind: 'conflict', reason, status };
}
