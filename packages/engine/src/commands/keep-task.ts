import { defineScript } from '../lua/script.js';

/** `lua/keep-task.lua`: a record lives to `keepUntil` at least (its expiry only moves later). */
export const keepTask = defineScript({
  file: 'keep-task',
  keys: ['task'],
  args: ['keepUntil', 'now'],
  decode: ([code]): 'ok' | 'missing' => {
    if (code === 'ok' || code === 'missing') return code;
    throw new Error(`unexpected reply to a keep: ${code}`);
  },
});
