import type { DurableRun } from './durable-context.js';

/**
 * A wait bounded by the task's expiry wakes this long before it (the reconciler reads a job
 * delayed to the expiry or later as parked for input); a run that starts from then on ends the
 * task `expired` (`TaskRun.execute`, issue 40).
 */
export const EXPIRY_WAKE_MS = 1;

/** How long a task that ended `expired` stays readable by default (issue 40): 10 minutes. */
export const DEFAULT_EXPIRED_GRACE_MS = 600_000;

/**
 * Before a durable run parks until `until`: a wait that lasts to the task's expiry keeps the
 * record `expiredGraceMs` past it (`keep-task.lua`), so the run woken there finds the task and
 * ends it `expired` instead of the task vanishing while it waits (issue 40, item 2).
 */
export async function keepPastExpiry(run: DurableRun, until: number): Promise<void> {
  if (until < run.task.expiresAt - EXPIRY_WAKE_MS) return;
  await run.durable.keep(run.task.id, run.task.expiresAt + run.expiredGraceMs);
}
