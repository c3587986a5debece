import { defineScript } from '../lua/script.js';

/** What a push did: `absent` also covers another tenant's task (never told apart). */
export type PushReply = { kind: 'ok' } | { kind: 'full' } | { kind: 'absent' };

/** `lua/push-task-message.lua`: appends to a task's side channel, bounded, and wakes waiters. */
export const pushTaskMessage = defineScript({
  file: 'push-task-message',
  keys: ['task', 'messages', 'op'],
  args: ['tenant', 'message', 'max', 'channel'],
  decode: ([code]): PushReply => {
    if (code === 'ok' || code === 'full' || code === 'absent') return { kind: code };
    throw new Error(`unexpected reply to a task message push: ${code}`);
  },
});
