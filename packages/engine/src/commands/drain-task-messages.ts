import { defineScript } from '../lua/script.js';

/** Every message, oldest first, taken; `absent` also covers another tenant's task. */
export type DrainReply = { kind: 'ok'; messages: string[] } | { kind: 'absent' };

/** `lua/drain-task-messages.lua`: takes every message of a task's side channel. */
export const drainTaskMessages = defineScript({
  file: 'drain-task-messages',
  keys: ['task', 'messages', 'op'],
  args: ['tenant'],
  decode: ([code, ...messages]): DrainReply => {
    if (code === 'ok') return { kind: 'ok', messages: messages.map(String) };
    if (code === 'absent') return { kind: code };
    throw new Error(`unexpected reply to a task message drain: ${code}`);
  },
});
