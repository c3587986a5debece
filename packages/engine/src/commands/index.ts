// Every script's typed wrapper (one per file of lua/). Internal to the engine: stores call these.
export { announceShards } from './announce-shards.js';
// Moved out of schedule-store.ts, task-messages.ts and reconciler.ts (issue 28).
export { addSchedule } from './add-schedule.js';
export { scheduleRoom, type ScheduleRoom } from './schedule-room.js';
export { removeSchedule } from './remove-schedule.js';
export { noteScheduleRun, type ScheduleNote } from './note-schedule-run.js';
export { noteScheduleError } from './note-schedule-error.js';
export { pushTaskMessage, type PushReply } from './push-task-message.js';
export { shiftTaskMessage, type ShiftReply } from './shift-task-message.js';
export { drainTaskMessages, type DrainReply } from './drain-task-messages.js';
export { dropIdleTenant, type DropIdleReply } from './drop-idle-tenant.js';
export { drainLegacyTenants } from './drain-legacy-tenants.js';
