import type { TaskStatus } from '@longrun/core';
import { defineScript } from '../lua/script.js';

export type ChildrenNote =
  { kind: 'ok' } | { kind: 'missing' } | { kind: 'refused'; current: TaskStatus };

/** `lua/note-children.lua`: a chunk of a batch's children, recorded on their parent once. */
export const noteChildren = defineScript({
  file: 'note-children',
  keys: ['task'],
  args: ['batch', 'from', 'ids', 'expiresAt'],
  decode: ([code, value]): ChildrenNote => {
    if (code === 'ok') return { kind: 'ok' };
    if (code === 'missing') return { kind: 'missing' };
    if (code === 'refused') return { kind: 'refused', current: value as TaskStatus };
    throw new Error(`unexpected reply to a children note: ${code}`);
  },
});
