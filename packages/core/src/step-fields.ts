// A durable task's steps in its record (issue 40): numbered entries, and the step each event
// changed. The Lua scripts get the same names from the generated include (STEP_FIELD,
// EVENT_STEP_FIELD), so they are written down once, here.

/** The prefix of a step entry's field (`s<n>`). */
export const STEP_FIELD_PREFIX = 's';

/**
 * The record field of a durable task's step entry `n` (1, 2, …).
 * @example stepEntryField(3) // 's3'
 */
export function stepEntryField(n: number | string): string {
  return `${STEP_FIELD_PREFIX}${n}`;
}

/** The prefix of the field holding the step an event changed (`es<n>`). */
export const EVENT_STEP_FIELD_PREFIX = 'es';

/**
 * The record field holding the step event `n` recorded or changed, as it was then (JSON).
 * @example eventStepField(7) // 'es7'
 */
export function eventStepField(n: number | string): string {
  return `${EVENT_STEP_FIELD_PREFIX}${n}`;
}
