import { TAG_INFIX, taskKeys } from '../keys.js';
import { provideInclude } from './loader.js';

/** A Lua string literal (key infixes are plain words; quoted defensively). */
const str = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * The include `generated/keys`: what follows the prefix in a task's key and in a schedule's
 * (`<prefix>:task:<id>`, `<prefix>:schedule:<id>`), from `taskKeys`, so that a script deriving
 * one key from another (a tick's create checks its schedule) never spells a key by hand.
 */
export function keyConstantsLua(): string {
  const keys = taskKeys('');
  return [
    '-- Generated from keys.ts (taskKeys): change it there.',
    `local TASK_INFIX = ${str(keys.task(''))}`,
    `local SCHEDULE_INFIX = ${str(keys.schedule(''))}`,
    `local TAG_INFIX = ${str(TAG_INFIX)}`,
    '',
  ].join('\n');
}

provideInclude('generated/keys', keyConstantsLua);
