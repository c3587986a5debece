import { defineScript, type LuaReply } from '../lua/script.js';
import { decodeTransition } from './transition-task.js';

/** `lua/forget-task.lua`: deletes a terminal task (`ok` with its status, `missing`, `refused`). */
export const forgetTask = defineScript({
  file: 'forget-task',
  keys: ['task', 'index', 'idem', 'events', 'usage'],
  args: ['member', 'dropIdem', 'id'],
  decode: (reply: LuaReply) => decodeTransition(reply),
});
