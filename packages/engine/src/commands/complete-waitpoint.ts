import type { TaskStatus } from '@longrun/core';
import { defineScript } from '../lua/script.js';

export type WaitpointOutcome =
  | { kind: 'ok'; wake: boolean }
  | { kind: 'absent' }
  | { kind: 'completed' }
  | { kind: 'timedOut' }
  | { kind: 'refused'; current: TaskStatus }
  | { kind: 'overBudget'; usedBytes: number; retryAfterMs: number };

/** `lua/complete-waitpoint.lua`: stores a waitpoint's data once; says whether to wake the job. */
export const completeWaitpoint = defineScript({
  file: 'complete-waitpoint',
  keys: ['task', 'outbox'],
  args: [
    'tenant',
    'channel',
    'id',
    'name',
    'data',
    'now',
    'message',
    'op',
    'openPrefix',
    'maxBytes',
  ],
  decode: ([code, value, extra]): WaitpointOutcome => {
    if (code === 'ok') return { kind: 'ok', wake: value === '1' };
    if (code === 'absent' || code === 'completed' || code === 'timedOut') return { kind: code };
    if (code === 'refused') return { kind: 'refused', current: value as TaskStatus };
    if (code === 'over-budget') {
      return { kind: 'overBudget', usedBytes: Number(value), retryAfterMs: Number(extra) };
    }
    throw new Error(`unexpected reply to a waitpoint completion: ${code}`);
  },
});
