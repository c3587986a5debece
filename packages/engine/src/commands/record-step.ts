import type { TaskStatus } from '@longrun/core';
import { defineScript } from '../lua/script.js';

export type StepOutcome =
  | { kind: 'ok'; ready: boolean }
  | { kind: 'exists'; value: string }
  | { kind: 'tooMany'; count: number }
  | { kind: 'overBudget'; usedBytes: number; retryAfterMs: number }
  | { kind: 'missing' }
  | { kind: 'refused'; current: TaskStatus };

/** `lua/record-step.lua`: a durable task's step result (and what it waits for), once. */
export const recordStep = defineScript({
  file: 'record-step',
  keys: ['task', 'outbox'],
  args: [
    'channel',
    'id',
    'name',
    'value',
    'now',
    'message',
    'wait',
    'children',
    'sleepUntil',
    'ended',
    'maxSteps',
    'openPrefix',
    'maxBytes',
  ],
  decode: ([code, value, extra]): StepOutcome => {
    if (code === 'ok') return { kind: 'ok', ready: value === '1' };
    if (code === 'exists') return { kind: 'exists', value: String(value) };
    if (code === 'too-many') return { kind: 'tooMany', count: Number(value) };
    if (code === 'over-budget') {
      return { kind: 'overBudget', usedBytes: Number(value), retryAfterMs: Number(extra) };
    }
    if (code === 'missing') return { kind: 'missing' };
    if (code === 'refused') return { kind: 'refused', current: value as TaskStatus };
    throw new Error(`unexpected reply to a step: ${code}`);
  },
});
