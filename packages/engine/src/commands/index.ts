// Every script's typed wrapper (one per file of lua/). Internal to the engine: stores call these.
import './bullmq-includes.js';
export { announceShards } from './announce-shards.js';
export { completeMany } from './complete-many.js';
export { completeLeased, type LeasedOutcome } from './complete-leased.js';
export { createMany } from './create-many.js';
export { createTask, decodeCreate, type CreateOutcome } from './create-task.js';
export { discardTask, type DiscardOutcome } from './discard-task.js';
export { drainLegacyTenants } from './drain-legacy-tenants.js';
export { dropIdleTenant } from './drop-idle-tenant.js';
export { forgetTask } from './forget-task.js';
export { setPush, type PushChange } from './set-push.js';
export { startTask, type StartOutcome } from './start-task.js';
export { tenantUsage } from './tenant-usage.js';
export { decodeTransition, transitionTask, type TransitionOutcome } from './transition-task.js';
// Moved out of schedule-store.ts, task-messages.ts and reconciler.ts (issue 28).
export { addSchedule } from './add-schedule.js';
export { scheduleRoom, type ScheduleRoom } from './schedule-room.js';
export { removeSchedule } from './remove-schedule.js';
export { noteScheduleRun, type ScheduleNote } from './note-schedule-run.js';
export { noteScheduleError } from './note-schedule-error.js';
export { pushTaskMessage, type PushReply } from './push-task-message.js';
export { shiftTaskMessage, type ShiftReply } from './shift-task-message.js';
export { drainTaskMessages, type DrainReply } from './drain-task-messages.js';
// Durable tasks (issue 29).
export { recordStep, type StepOutcome } from './record-step.js';
export { completeWaitpoint, type WaitpointOutcome } from './complete-waitpoint.js';
export { noteChildDone, type ChildNote } from './note-child-done.js';
export { noteChildren, type ChildrenNote } from './note-children.js';
export { checkChildren, type ChildrenCheck } from './check-children.js';
export { childMayStart, type ChildStart } from './child-may-start.js';
// Durable tasks keep their promises (issue 40).
export { timeOutWaitpoint, type WaitpointTimeout } from './time-out-waitpoint.js';
export { keepTask } from './keep-task.js';
