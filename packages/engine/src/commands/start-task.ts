import type { TaskStatus } from '@longrun/core';
import { defineScript } from '../lua/script.js';

export type StartOutcome =
  | { kind: 'ok'; hash: Record<string, string>; steps: Map<string, string> }
  | { kind: 'missing' }
  | { kind: 'refused'; current: TaskStatus };

/** `lua/start-task.lua`: a worker's `start` event, returning the record as it now is. */
export const startTask = defineScript({
  file: 'start-task',
  keys: ['task', 'outbox'],
  args: ['channel', 'id'],
  itemArgs: ['field', 'value'],
  decode: ([code, value, results]): StartOutcome => {
    if (code === 'missing') return { kind: 'missing' };
    if (code === 'refused') return { kind: 'refused', current: value as TaskStatus };
    if (code !== 'ok' || !Array.isArray(value))
      throw new Error(`unexpected reply to a start: ${code}`);
    const hash: Record<string, string> = {};
    for (let i = 0; i + 1 < value.length; i += 2) hash[String(value[i])] = String(value[i + 1]);
    const steps = new Map<string, string>();
    const list = Array.isArray(results) ? results : [];
    for (let i = 0; i + 1 < list.length; i += 2) steps.set(String(list[i]), String(list[i + 1]));
    return { kind: 'ok', hash, steps };
  },
});
