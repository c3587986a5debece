import { FIELD, LIFECYCLE, TERMINAL_STATUSES } from '@longrun/core';
import { provideInclude } from './loader.js';

/** A Lua string literal (field names and statuses are plain words; quoted defensively). */
const str = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** `{a = true, b = true}` */
const set = (names: readonly string[]) => `{${names.map((n) => `[${str(n)}] = true`).join(', ')}}`;

/**
 * The include `generated/core`: the record's field names (`F.status`, `F.statusMessage`, …), the
 * terminal statuses (`TERMINAL[st]`) and the lifecycle table (`LIFECYCLE.answer.from[st]`,
 * `.to`, `.message`), built from core's `FIELD`, `TERMINAL_STATUSES` and `LIFECYCLE` when a
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
    '-- Generated from @longrun/core (FIELD, TERMINAL_STATUSES, LIFECYCLE): change it there.',
    `local F = {${fields}}`,
    `local TERMINAL = ${set(TERMINAL_STATUSES)}`,
    'local LIFECYCLE = {',
    ...events,
    '}',
    '',
  ].join('\n');
}

provideInclude('generated/core', coreConstantsLua);
