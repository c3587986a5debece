import { defineScript } from '../lua/script.js';

/** `wake`: the parent waits on its children and all ended. */
export type ChildNote = 'wake' | 'wait' | 'missing';

/** `lua/note-child-done.lua`: counts a child's end in its parent's record, once. */
export const noteChildDone = defineScript({
  file: 'note-child-done',
  keys: ['task'],
  args: ['child'],
  decode: ([code]): ChildNote => {
    if (code === 'wake' || code === 'wait' || code === 'missing') return code;
    throw new Error(`unexpected reply to a child note: ${code}`);
  },
});
