import { defineScript } from '../lua/script.js';
import '../schedule-fields.js';
import { decodeScheduleNote, type ScheduleNote } from './note-schedule-run.js';

/** `lua/note-schedule-error.lua`: a tick made no task, for this reason. */
export const noteScheduleError = defineScript({
  file: 'note-schedule-error',
  keys: ['schedule'],
  args: ['error'],
  decode: ([code]): ScheduleNote => decodeScheduleNote(code),
});
