import './bullmq-includes.js';
import { defineScript, type LuaReply } from '../lua/script.js';

export type CreateOutcome =
  | { created: true; priority?: number }
  | { created: false; idempotencyValue: string }
  /** The record names a schedule that is gone (deleted before the tick's create ran). */
  | { created: false; gone: true }
  | { created: false; full: true; openTasks: number }
  | { created: false; over: true; usedBytes: number; retryAfterMs: number };

/** One create's reply (`lua/includes/create.lua`), as create-task and create-many give it. */
export function decodeCreate(reply: readonly unknown[]): CreateOutcome {
  const [code, a, b] = reply;
  switch (code) {
    case 'ok':
      return a === undefined ? { created: true } : { created: true, priority: Number(a) };
    // The same create, run again (a resend after a reconnect): the task is there already.
    case 'exists':
      return { created: true };
    case 'dup':
      return { created: false, idempotencyValue: String(a) };
    case 'gone':
      return { created: false, gone: true };
    case 'full':
      return { created: false, full: true, openTasks: Number(a) };
    case 'over':
      return { created: false, over: true, usedBytes: Number(a), retryAfterMs: Number(b) };
    default:
      throw new Error(`unexpected reply to a create: ${String(code)}`);
  }
}

/** `lua/create-task.lua`: stores one new task (see `TaskStore.create`). */
export const createTask = defineScript({
  file: 'create-task',
  keys: ['task', 'index', 'idem', 'open', 'usage', 'openTenants', 'fair', 'head'],
  args: [
    'expiresAt',
    'member',
    'pruneBound',
    'idemValue',
    'indexTtl',
    'id',
    'maxOpenTasks',
    'maxBytes',
    'fairStep',
    'priorityOffset',
    'now',
    'fields',
  ],
  decode: (reply: LuaReply) => decodeCreate(reply),
});
