import { defineScript } from '../lua/script.js';
import { decodeTransition, type TransitionOutcome } from './transition-task.js';

/** A leased completion's outcome: the transition's, or `lost` (the lease lost its lock). */
export type LeasedOutcome = TransitionOutcome | { ok: false; reason: 'lost' };

/**
 * `lua/complete-leased.lua`: HTTP workers' completions (decision 68), each written only while its
 * lease holds its job's lock.
 */
export const completeLeased = defineScript({
  file: 'complete-leased',
  keys: ['outbox'],
  args: ['channel', 'openPrefix', 'updatedAt'],
  itemKeys: ['task', 'lock'],
  itemArgs: ['id', 'result', 'token'],
  decode: ([, ...replies]): LeasedOutcome[] =>
    replies.map((r) =>
      (r as unknown[])[0] === 'lost'
        ? { ok: false as const, reason: 'lost' as const }
        : decodeTransition(r as unknown[]),
    ),
});
