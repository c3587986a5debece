import type { TaskStatus } from '@longrun/core';
import { defineScript } from '../lua/script.js';

export type StepOutcome =
  | { kind: 'ok'; ready: boolean }
  | { kind: 'exists'; value: string }
  | { kind: 'missing' }
  | { kind: 'refused'; current: TaskStatus };

/** `lua/record-step.lua`: a durable task's step result (and what it waits for), once. */
export const recordStep = defineScript({
  file: 'record-step',
  keys: ['task', 'outbox'],
  args: ['channel', 'id', 'name', 'value', 'endedAt', 'message', 'wait', 'children'],
  decode: ([code, value]): StepOutcome => {
    if (code === 'ok') return { kind: 'ok', ready: value === '1' };
    if (code === 'exists') return { kind: 'exists', value: String(value) };
    if (code === 'missing') return { kind: 'missing' };
    if (code === 'refused') return { kind: 'refused', current: value as TaskStatus };
    throw new Error(`unexpected reply to a step: ${code}`);
  },
});
