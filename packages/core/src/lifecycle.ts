import { TASK_STATUSES, TERMINAL_STATUSES, toTaskStatus, type BullJobState } from './status.js';
import type { TaskStatus } from './status.js';

/** The statuses a task can still leave. */
export const OPEN_STATUSES: readonly TaskStatus[] = TASK_STATUSES.filter(
  (s) => !TERMINAL_STATUSES.includes(s),
);

/** One row of the lifecycle table: which statuses the event applies to, and what it leads to. */
export interface LifecycleEvent {
  /** The guard: the statuses a task must be in for the event to apply (none: it creates one). */
  readonly from: readonly TaskStatus[];
  /** The status after the event; `null` keeps the current one. */
  readonly to: TaskStatus | null;
  /** The `statusMessage` the event writes, unless its caller gives one. */
  readonly statusMessage?: string;
}

/**
 * Every change a task goes through, with its guard and next status: the one table the engine,
 * the worker and the Lua scripts follow (scripts get each guard as an argument, see `guardArg`).
 * A terminal status has no way out: no row lists one in `from`.
 */
export const LIFECYCLE = {
  /** A door accepted the task: record and job are written. */
  submit: { from: [], to: 'working', statusMessage: 'queued' },
  /** A worker took the job (or a first run has run for a while). */
  start: { from: ['working'], to: 'working', statusMessage: 'running' },
  /** The handler reported progress. */
  progress: { from: OPEN_STATUSES, to: null },
  /** The handler asked for input; its job is parked. */
  park: { from: ['working'], to: 'input_required' },
  /** The caller answered; the parked job is woken. */
  answer: { from: ['input_required'], to: 'working', statusMessage: 'input received' },
  /** The handler returned. */
  complete: { from: OPEN_STATUSES, to: 'completed', statusMessage: 'completed' },
  /** The handler threw with no attempt left, or the job cannot run. */
  fail: { from: OPEN_STATUSES, to: 'failed', statusMessage: 'failed' },
  /** The handler threw and BullMQ will run it again after a backoff. */
  retry: { from: OPEN_STATUSES, to: 'working' },
  /** The caller cancelled; the job is removed and any run aborted. */
  cancel: { from: OPEN_STATUSES, to: 'cancelled', statusMessage: 'cancelled by request' },
  /** The ttl passed: Redis deletes the record and its keys (no write; listed for completeness). */
  expire: { from: OPEN_STATUSES, to: null },
  /** The reconciler found the task's job gone after it ran (failed or removed by BullMQ). */
  jobLost: { from: OPEN_STATUSES, to: 'failed', statusMessage: 'failed' },
  /** A durable step's result was recorded (`ctx.step`, a sleep, children made, a waitpoint). */
  step: { from: ['working'], to: null },
  /** A waitpoint of the task was completed (`POST /v1/waitpoints/{id}`). */
  waitpoint: { from: OPEN_STATUSES, to: null },
  /** The reconciler found a job that never arrived, and added it again. */
  requeue: { from: ['working'], to: 'working', statusMessage: 'queued' },
} as const satisfies Record<string, LifecycleEvent>;

export type LifecycleEventName = keyof typeof LIFECYCLE;

/**
 * Whether `event` applies to a task in `status`.
 * @example canApply('answer', 'working') // false
 */
export function canApply(event: LifecycleEventName, status: TaskStatus): boolean {
  return (LIFECYCLE[event].from as readonly TaskStatus[]).includes(status);
}

/**
 * An event's guard as the scripts take it: the allowed statuses between spaces, so Lua checks
 * `string.find(guard, ' ' .. status .. ' ', 1, true)`.
 * @example guardArg('answer') // ' input_required '
 */
export function guardArg(event: LifecycleEventName): string {
  return ` ${LIFECYCLE[event].from.join(' ')} `;
}

/** What the reconciler knows of a task it checks: its record and its BullMQ job, read together. */
export interface RepairFacts {
  status: TaskStatus;
  /** The job's BullMQ state (`unknown`: there is no job). */
  jobState: BullJobState;
  /** The job is delayed until the task's expiry or later: parked for input. */
  parked: boolean;
  /** A worker recorded a start (the `start` event) for this task. */
  started: boolean;
  /** Answers given so far. */
  answers: number;
  /** Times the reconciler has added the job again. */
  repairs: number;
}

/** What the reconciler does about a task. */
export type Repair = 'none' | 'requeue' | 'promote' | 'jobLost';

/** A task whose job keeps vanishing before it starts is failed after this many requeues. */
export const MAX_REPAIRS = 3;

/**
 * The repair a task needs so that its status follows its queue. The queue's view is
 * `toTaskStatus(jobState, …)`; where it disagrees with the record, the record wins only while the
 * job can still bring them together.
 * @example repairFor({ status: 'working', jobState: 'unknown', started: false, … }) // 'requeue'
 */
export function repairFor(facts: RepairFacts): Repair {
  const awaitingInput = facts.status === 'input_required';
  const queueSays = toTaskStatus(facts.jobState, { cancelRequested: false, awaitingInput });
  if (facts.status !== 'working') return 'none'; // input_required: the answer re-adds a lost job
  if (queueSays === 'failed') {
    // No job (or one BullMQ failed for good): never started, or answered and not yet re-run,
    // means the job never arrived; started means BullMQ lost or failed it.
    const neverRan = !facts.started || facts.answers > 0;
    return neverRan && facts.repairs < MAX_REPAIRS ? 'requeue' : 'jobLost';
  }
  // A job parked for input while the record says working: the run crashed between parking and
  // recording it, or an answer's wake-up failed. Running it again asks again, or uses the answer.
  if (facts.jobState === 'delayed' && facts.parked) return 'promote';
  return 'none';
}
