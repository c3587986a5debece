import { defineScript } from '../lua/script.js';

/** What `schedule-room` found: room, the cap reached, or the Idempotency-Key claimed before. */
export type ScheduleRoom =
  { kind: 'ok' } | { kind: 'full'; count: number } | { kind: 'dup'; claimed: string };

/** `lua/schedule-room.lua`: whether a tenant may add a schedule (read only). */
export const scheduleRoom = defineScript({
  file: 'schedule-room',
  keys: ['index', 'claim'],
  args: ['max', 'checkClaim'],
  decode: ([code, value]): ScheduleRoom => decodeScheduleRoom(code, value),
});

/** The reply shared by `schedule-room` and `add-schedule`. */
export function decodeScheduleRoom(code: string, value: unknown): ScheduleRoom {
  if (code === 'ok') return { kind: 'ok' };
  if (code === 'full') return { kind: 'full', count: Number(value) };
  if (code === 'dup') return { kind: 'dup', claimed: String(value) };
  throw new Error(`unexpected reply to a schedule's room: ${code}`);
}
