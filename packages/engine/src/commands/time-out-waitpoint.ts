import type { TaskStatus } from '@longrun/core';
import { defineScript } from '../lua/script.js';

export type WaitpointTimeout =
  | { kind: 'ok' }
  | { kind: 'completed'; data: string }
  | { kind: 'missing' }
  | { kind: 'refused'; current: TaskStatus };

/** `lua/time-out-waitpoint.lua`: records a waitpoint's timeout as its one outcome, unless its data came first. */
export const timeOutWaitpoint = defineScript({
  file: 'time-out-waitpoint',
  keys: ['task', 'outbox'],
  args: ['channel', 'id', 'name', 'now', 'message'],
  decode: ([code, value]): WaitpointTimeout => {
    if (code === 'ok' || code === 'missing') return { kind: code };
    if (code === 'completed') return { kind: 'completed', data: String(value) };
    if (code === 'refused') return { kind: 'refused', current: value as TaskStatus };
    throw new Error(`unexpected reply to a waitpoint timeout: ${code}`);
  },
});
