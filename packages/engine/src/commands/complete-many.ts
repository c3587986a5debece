import { defineScript } from '../lua/script.js';
import { decodeTransition, type TransitionOutcome } from './transition-task.js';

/** `lua/complete-many.lua`: the `complete` event of several tasks in one call, each guarded. */
export const completeMany = defineScript({
  file: 'complete-many',
  keys: ['outbox'],
  args: ['channel', 'openPrefix', 'updatedAt'],
  itemKeys: ['task'],
  itemArgs: ['id', 'result'],
  decode: ([, ...replies]): TransitionOutcome[] =>
    replies.map((r) => decodeTransition(r as unknown[])),
});
