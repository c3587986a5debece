import { defineScript } from '../lua/script.js';
import '../schedule-fields.js';

/** `lua/remove-schedule.lua`: drops a schedule, its index entry and its claim. */
export const removeSchedule = defineScript({
  file: 'remove-schedule',
  keys: ['schedule', 'index'],
  args: ['id'],
  decode: ([code]) => {
    if (code !== 'ok') throw new Error(`unexpected reply to a schedule remove: ${code}`);
    return { kind: 'ok' as const };
  },
});
