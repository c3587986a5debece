import type { TaskStatus } from '@longrun/core';
import { defineScript, type LuaReply } from '../lua/script.js';

export type TransitionOutcome =
  | { ok: true; previous: TaskStatus; eventId?: string }
  | { ok: false; reason: 'missing' }
  | { ok: false; reason: 'refused'; current: TaskStatus }
  /** The record changed since the caller read it (`transition`'s `ifSeq`). */
  | { ok: false; reason: 'changed'; current: TaskStatus };

/** A guarded change's reply (transition-task, complete-many's items, forget-task). */
export function decodeTransition(reply: readonly unknown[]): TransitionOutcome {
  const [code, a, b] = reply;
  switch (code) {
    case 'ok':
      return { ok: true, previous: a as TaskStatus, eventId: b === undefined ? '' : String(b) };
    case 'missing':
      return { ok: false, reason: 'missing' };
    case 'refused':
      return { ok: false, reason: 'refused', current: a as TaskStatus };
    case 'changed':
      return { ok: false, reason: 'changed', current: a as TaskStatus };
    default:
      throw new Error(`unexpected reply to a transition: ${String(code)}`);
  }
}

/** `lua/transition-task.lua`: one lifecycle event on one task, guarded by its row. */
export const transitionTask = defineScript({
  file: 'transition-task',
  keys: ['task', 'outbox'],
  args: ['event', 'append', 'channel', 'id', 'openPrefix', 'expectSeq', 'op'],
  itemArgs: ['field', 'value'],
  decode: (reply: LuaReply) => decodeTransition(reply),
});
