import { assertNever, type TaskStatus } from '@longrun/core';

/** What `longrun` exits with, so scripts can branch on the outcome. */
export const EXIT = {
  ok: 0,
  failed: 1,
  cancelled: 2,
  inputRequired: 3,
  /** Bad arguments, no connection, or the API refused the request. */
  error: 4,
  /** The task is still working (`result` on a running task, or `wait --timeout-ms` ran out). */
  notFinished: 5,
  /** Ctrl-C while waiting (the task goes on). */
  interrupted: 130,
} as const;

/**
 * The exit code for a task that is in `status`.
 * @example exitCodeFor('cancelled') // 2
 */
export function exitCodeFor(status: TaskStatus): number {
  switch (status) {
    case 'completed':
      return EXIT.ok;
    case 'failed':
      return EXIT.failed;
    case 'cancelled':
      return EXIT.cancelled;
    case 'input_required':
      return EXIT.inputRequired;
    case 'working':
      return EXIT.notFinished;
    default:
      return assertNever(status);
  }
}
