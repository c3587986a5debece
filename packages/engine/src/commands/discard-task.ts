import { defineScript } from '../lua/script.js';

export type DiscardOutcome = 'kept' | 'discarded' | 'absent';

/** `lua/discard-task.lua`: takes back a task whose create or job failed, unless it is held. */
export const discardTask = defineScript({
  file: 'discard-task',
  keys: ['task', 'index', 'idem', 'events', 'open', 'usage'],
  args: ['member', 'idemValue', 'id'],
  decode: ([code]): DiscardOutcome => {
    if (code === 'kept' || code === 'discarded' || code === 'absent') return code;
    throw new Error(`unexpected reply to a discard: ${code}`);
  },
});
