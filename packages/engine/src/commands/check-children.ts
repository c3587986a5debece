import type { TaskStatus } from '@longrun/core';
import { defineScript } from '../lua/script.js';

export type ChildrenCheck =
  | { kind: 'ok'; ready: boolean; expiresAt: number }
  | { kind: 'missing' }
  | { kind: 'refused'; current: TaskStatus };

/** `lua/check-children.lua`: whether a parent's children all ended (O(1)); it waits on them. */
export const checkChildren = defineScript({
  file: 'check-children',
  keys: ['task', 'outbox'],
  args: ['channel', 'id', 'now', 'expiresAt'],
  decode: ([code, value, expires]): ChildrenCheck => {
    if (code === 'ok') {
      const at = Number(expires);
      return { kind: 'ok', ready: value === '1', expiresAt: expires === '' ? Infinity : at };
    }
    if (code === 'missing') return { kind: 'missing' };
    if (code === 'refused') return { kind: 'refused', current: value as TaskStatus };
    throw new Error(`unexpected reply to a children check: ${code}`);
  },
});
