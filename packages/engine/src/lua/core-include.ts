import {
  EVENT_FIELD_PREFIX,
  EVENT_STEP_FIELD_PREFIX,
  FIELD,
  LIFECYCLE,
  STEP_FIELD_PREFIX,
  TERMINAL_STATUSES,
} from '@longrun/core';
import { provideInclude } from './loader.js';

/** A Lua string literal (field names and statuses are plain words; quoted defensively). */
const str = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** `{a = true, b = true}` */
const set = (names: readonly string[]) => `{${names.map((n) => `[${str(n)}] = true`).join(', ')}}`;

/**
 * The include `generated/core`: the record's field names (`F.status`, `F.statusMessage`, …), the
 * terminal statuses (`TERMINAL[st]`) and the lifecycle table (`LIFECYCLE.answer.from[st]`,
 * `.to`, `.message`), the field of a past event (`EVENT_FIELD(n)`, decision 57), of the step an
 * event changed (`EVENT_STEP_FIELD(n)`) and of a step entry (`STEP_FIELD(n)`, issue 40), built from
 * core's `FIELD`, `TERMINAL_STATUSES`, `LIFECYCLE` and `EVENT_FIELD_PREFIX` when a
 * script is first loaded, so that they stay defined once, in TypeScript.
 */
export function coreConstantsLua(): string {
  const fields = Object.entries(FIELD)
    .map(([name, field]) => `${name} = ${str(field)}`)
    .join(', ');
  const events = Object.entries(LIFECYCLE).map(([event, row]) => {
    const parts = [`from = ${set(row.from)}`];
    if (row.to) parts.push(`to = ${str(row.to)}`);
    if ('statusMessage' in row && row.statusMessage)
      parts.push(`message = ${str(row.statusMessage)}`);
    return `  ${event} = {${parts.join(', ')}},`;
  });
  return [
    '-- Generated from @longrun/core (FIELD, TERMINAL_STATUSES, LIFECYCLE, EVENT_FIELD_PREFIX): change it there.',
    `local F = {${fields}}`,
    `local TERMINAL = ${set(TERMINAL_STATUSES)}`,
    'local LIFECYCLE = {',
    ...events,
    '}',
    `local function EVENT_FIELD(n) return ${str(EVENT_FIELD_PREFIX)} .. n end`,
    `local function EVENT_STEP_FIELD(n) return ${str(EVENT_STEP_FIELD_PREFIX)} .. n end`,
    `local function STEP_FIELD(n) return ${str(STEP_FIELD_PREFIX)} .. n end`,
    '',
  ].join('\n');
}

provideInclude('generated/core', coreConstantsLua);
