import { defineScript } from '../lua/script.js';
import '../schedule-fields.js';

/** Whether a note reached its schedule (`gone`: deleted meanwhile, nothing written). */
export type ScheduleNote = { kind: 'ok' } | { kind: 'gone' };

/** The reply shared by the two note scripts. */
export function decodeScheduleNote(code: string): ScheduleNote {
  if (code === 'ok' || code === 'gone') return { kind: code };
  throw new Error(`unexpected reply to a schedule note: ${code}`);
}

/** `lua/note-schedule-run.lua`: a tick made this task (clears the last error). */
export const noteScheduleRun = defineScript({
  file: 'note-schedule-run',
  keys: ['schedule'],
  args: ['at', 'task'],
  decode: ([code]): ScheduleNote => decodeScheduleNote(code),
});
