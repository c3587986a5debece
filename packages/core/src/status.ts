/** The five statuses a task handle can report (MCP Tasks / A2A vocabulary). */
export const TASK_STATUSES = [
  'working',
  'input_required',
  'completed',
  'cancelled',
  'failed',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Statuses a task never leaves. */
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['completed', 'cancelled', 'failed'];

/**
 * Whether a status is final.
 * @example isTerminal('completed') // true
 */
export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** Every state BullMQ's `job.getState()` can answer, plus the moment a job is being retried. */
export type BullJobState =
  | 'waiting'
  | 'prioritized'
  | 'delayed'
  | 'active'
  | 'waiting-children'
  | 'completed'
  | 'failed'
  | 'unknown';

/** What longrun's own task record knows that BullMQ's state does not. */
export interface TaskFacts {
  /** A cancel was accepted for this task. Wins over everything but an earlier terminal status. */
  cancelRequested: boolean;
  /** The handler parked the job (as `delayed`) waiting for an answer from the caller. */
  awaitingInput: boolean;
  /** With state `failed`: BullMQ still has attempts left, so the job will run again. */
  willRetry?: boolean;
}

/** Fails the build when a switch does not handle every member of a union. */
export function assertNever(value: never): never {
  throw new Error(`Unhandled value: ${String(value)}`);
}

/**
 * The one place a BullMQ job state plus longrun's task facts become a task status.
 * @example toTaskStatus('delayed', { cancelRequested: false, awaitingInput: true }) // 'input_required'
 */
export function toTaskStatus(state: BullJobState, facts: TaskFacts): TaskStatus {
  if (facts.cancelRequested) return 'cancelled';
  switch (state) {
    case 'waiting':
    case 'prioritized':
    case 'active':
    case 'waiting-children':
      return 'working';
    case 'delayed':
      // A parked job and a retry backoff are both `delayed`: only our marker tells them apart.
      return facts.awaitingInput ? 'input_required' : 'working';
    case 'completed':
      return 'completed';
    case 'failed':
      return facts.willRetry ? 'working' : 'failed';
    case 'unknown':
      // The job is gone without a cancel: it was removed or lost, so the work did not happen.
      return 'failed';
    default:
      return assertNever(state);
  }
}
