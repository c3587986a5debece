import { defineScript } from '../lua/script.js';

/** The oldest message, taken; `absent` also covers another tenant's task. */
export type ShiftReply = { kind: 'ok'; message: string } | { kind: 'empty' } | { kind: 'absent' };

/** `lua/shift-task-message.lua`: takes the oldest message of a task's side channel. */
export const shiftTaskMessage = defineScript({
  file: 'shift-task-message',
  keys: ['task', 'messages', 'op'],
  args: ['tenant'],
  decode: ([code, message]): ShiftReply => {
    if (code === 'ok') return { kind: 'ok', message: String(message) };
    if (code === 'empty' || code === 'absent') return { kind: code };
    throw new Error(`unexpected reply to a task message shift: ${code}`);
  },
});
