import { defineScript } from '../lua/script.js';
import '../schedule-fields.js';
import { decodeScheduleRoom, type ScheduleRoom } from './schedule-room.js';

/** `lua/add-schedule.lua`: stores a schedule unless at the cap or its claim was taken. */
export const addSchedule = defineScript({
  file: 'add-schedule',
  keys: ['index', 'schedule', 'claim'],
  args: ['max', 'id', 'tenant', 'created', 'spec', 'claimValue', 'claimTtl'],
  decode: ([code, value]): ScheduleRoom => decodeScheduleRoom(code, value),
});
