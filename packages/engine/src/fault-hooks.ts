/**
 * Points where a test may stop a process on purpose, to check what the engine repairs after a
 * crash at the worst moment (the reconciler's tests). Production passes none: each point costs
 * one optional call on its path. Only the apps build hooks, from `LONGRUN_TEST_CRASH_AT`
 * (`crashingFaults`), so no test setting reaches the engine's code.
 */
export interface FaultHooks {
  /**
   * Called after a submit stored its record and before its job is added. Set, it also makes the
   * submit add the job in a second step rather than in the create's own script, so there is a
   * moment between the two to stop at.
   */
  afterCreate?(): void;
  /** Called after a run parked its job for input and before it recorded `input_required`. */
  afterPark?(): void;
  /** Called after a durable parent's child was made and before its parent lists it (issue 40). */
  afterChild?(): void;
}

/** The crash points `LONGRUN_TEST_CRASH_AT` names. */
export type CrashPoint = 'after-create' | 'after-park' | 'after-child';

/**
 * Hooks that kill this process (`SIGKILL`, no clean-up) at `point`; none when it is unset.
 * @example new TaskEngine({ ...opts, faults: crashingFaults(config.LONGRUN_TEST_CRASH_AT) })
 */
export function crashingFaults(point: CrashPoint | undefined): FaultHooks | undefined {
  const crash = () => process.kill(process.pid, 'SIGKILL');
  if (point === 'after-create') return { afterCreate: crash };
  if (point === 'after-park') return { afterPark: crash };
  if (point === 'after-child') return { afterChild: crash };
  return undefined;
}
