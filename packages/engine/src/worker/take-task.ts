import { DelayedError, type Job } from 'bullmq';
import type { TaskStore } from '../task-store.js';
import type { DurableHost } from './durable-host.js';
import type { RunTask, TaskJobData } from './job-data.js';

/**
 * A first run of a job that carries its input needs nothing from the record: the task is
 * `working` and the completion script refuses to touch it if it was cancelled meanwhile.
 */
export function isFirstRun(job: Job, runningMarkMs: number): boolean {
  const data = (job.data ?? {}) as TaskJobData;
  return (
    runningMarkMs > 0 &&
    data.input !== undefined &&
    data.expiresAt !== undefined &&
    job.attemptsMade === 0 &&
    (job.attemptsStarted ?? 1) <= 1
  );
}

/** No durable step results: a first run's (its durable calls copy it before recording one). */
export const NO_STEPS: ReadonlyMap<string, string> = new Map();

/**
 * A first run's task, from its job alone (`isFirstRun`), or `null` when it has expired by `now`.
 */
export function firstRunTask(job: Job, now: number): RunTask | null {
  const data = (job.data ?? {}) as TaskJobData;
  const expiresAt = data.expiresAt!;
  return expiresAt > now
    ? {
        id: job.id ?? '',
        type: job.name,
        input: data.input!,
        inputs: [],
        inputsRead: false,
        expiresAt,
        timeoutMs: data.timeoutMs,
        parentTaskId: data.parent,
        tenant: data.tenant,
        steps: NO_STEPS,
      }
    : null;
}

/**
 * Any other run's task, by the `start` event, which checks in one script that it is still to be
 * done, marks it running and reads it (retry, stalled re-run, resumed after input, re-added job).
 */
export async function takeTask(
  store: TaskStore,
  job: Job,
  host?: DurableHost,
  token?: string,
): Promise<RunTask | null> {
  // A child asks its parent before it is marked running (its job names both): see `childTask`.
  const data = (job.data ?? {}) as TaskJobData;
  const child = { id: job.id ?? '', parentTaskId: data.parent, tenant: data.tenant };
  if (data.parent && !(await childTask(host, child, job, token))) return null;
  const record = await store.start(job.id ?? '', { awaitingInput: false, started: true });
  return (
    record && {
      id: record.id,
      type: record.type,
      input: record.input,
      inputs: record.inputs,
      inputsRead: true,
      expiresAt: record.createdAt + record.ttlMs,
      timeoutMs: record.timeoutMs,
      traceparent: record.traceparent,
      lastRunTrace: record.lastRunTrace,
      parentTaskId: record.parentTaskId,
      tenant: record.tenant,
      steps: record.stepResults,
      sleeping: record.sleeping,
    }
  );
}

/** What `childTask` reads of a task: its id, parent and tenant. */
type ChildOfJob = Pick<RunTask, 'id' | 'parentTaskId' | 'tenant'>;

/**
 * A child task, if it may start (issue 40, items 3 and 4): `null` when its parent was cancelled
 * (the child is cancelled too and does not run), so no child's handler starts once its parent's
 * cancel was written, whichever order the cancel reaches its children in; and not before its
 * parent lists it: the job is given back for a moment (throws BullMQ's `DelayedError`), so no
 * child runs that a cancel of its parent could miss. One script on the parent; unsure (Redis
 * away), the child runs, as it did before.
 */
export async function childTask<T extends ChildOfJob>(
  host: DurableHost | undefined,
  task: T | null,
  job: Job,
  token: string | undefined,
): Promise<T | null> {
  if (!task?.parentTaskId || !host) return task;
  const start = await host.childMayStart(task).catch(() => 'run' as const);
  if (start === 'cancelled') return null;
  if (start === 'run') return task;
  const pickups = Math.max(1, job.attemptsStarted ?? 1);
  await job.moveToDelayed(Date.now() + Math.min(2000, 50 * 2 ** Math.min(pickups - 1, 6)), token);
  throw new DelayedError();
}
