import { defineScript } from '../lua/script.js';

/** `run`: start it; `cancelled`: its parent was cancelled; `wait`: not listed on its parent yet. */
export type ChildStart = 'run' | 'cancelled' | 'wait';

/** `lua/child-may-start.lua`: whether a child may start, from its parent's record. */
export const childMayStart = defineScript({
  file: 'child-may-start',
  keys: ['parent'],
  args: ['child'],
  decode: ([code]): ChildStart => {
    if (code === 'run' || code === 'cancelled' || code === 'wait') return code;
    throw new Error(`unexpected reply to a child start: ${code}`);
  },
});
