import type { Job } from 'bullmq';
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
): Promise<RunTask | null> {
  const record = await store.start(job.id ?? '', { awaitingInput: false, started: true });
  const task: RunTask | null = record && {
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
  };
  return task?.parentTaskId ? childTask(host, task) : task;
}

/**
 * A child task, unless its parent was cancelled (issue 40, item 4): then the child is cancelled
 * too and does not run (`null`), so no child's handler starts once its parent's cancel was
 * written, whichever order the parent's cancel reaches its children in. One read of the parent;
 * unsure (Redis away), the child runs, as it did before.
 */
export async function childTask(
  host: DurableHost | undefined,
  task: RunTask | null,
): Promise<RunTask | null> {
  if (!task?.parentTaskId || !host) return task;
  const stop = await host.parentCancelled(task).catch(() => false);
  return stop ? null : task;
}
