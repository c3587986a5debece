import { provideInclude } from './lua/loader.js';

/**
 * The hash fields of a schedule (`<prefix>:schedule:<id>`), named once here for the store and
 * its scripts alike (they are not task record fields, so core's `FIELD` does not have them).
 * `idem` names the schedule's Idempotency-Key claim, when it was created with one.
 */
export const SCHEDULE_FIELD = {
  tenant: 'tenant',
  createdAt: 'created',
  spec: 'spec',
  lastRunAt: 'lastRun',
  lastTaskId: 'lastTask',
  lastError: 'lastError',
  idem: 'idem',
} as const;

/** The include `generated/schedule`: `SCHEDULE.<field>` from `SCHEDULE_FIELD`. */
export function scheduleFieldsLua(): string {
  const fields = Object.entries(SCHEDULE_FIELD)
    .map(([name, field]) => `${name} = '${field}'`)
    .join(', ');
  return [
    '-- Generated from SCHEDULE_FIELD (engine/src/schedule-fields.ts): change it there.',
    `local SCHEDULE = {${fields}}`,
    '',
  ].join('\n');
}

provideInclude('generated/schedule', scheduleFieldsLua);
