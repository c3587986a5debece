import type { Task } from '@modelcontextprotocol/sdk/types.js';
import { isTerminal, type TaskHandle } from '@longrun/core';
import type { TaskEngine } from '@longrun/engine';
import { sdkTask } from './engine-task-store.js';

/** How many of the tenant's newest tasks a stream follows. */
export const PUSHED_TASKS = 100;

export interface StatusPushOptions {
  /** How often the tenant's task list is read again (new tasks, missed wake-ups). */
  relistMs: number;
  /** Called with a task whose status changed (or a task first seen after the push started). */
  send(task: Task): void;
}

/**
 * `notifications/tasks/status` for one open 2025-11-25 GET stream (issue 32): the tenant's tasks
 * (its newest `PUSHED_TASKS`) are read when the stream opens, and each change of status after
 * that is sent. Each unfinished task is followed through the engine's per-task wake-ups (any
 * replica or worker that changes it wakes this one), and the list is read again every
 * `relistMs` for tasks made since, on any replica or door. Nothing is kept but what this stream
 * has sent; returns the function that stops it.
 * @example const stop = pushTaskStatuses(engine, 'acme', { relistMs: 1000, send })
 */
export function pushTaskStatuses(
  engine: TaskEngine,
  tenant: string,
  opts: StatusPushOptions,
): () => void {
  const seen = new Map<string, string>(); // taskId -> status last told (or found at start)
  const wakes = new Map<string, () => void>(); // unfinished tasks' wake-up subscriptions
  let stopped = false;
  let primed = false;

  const note = (handle: TaskHandle) => {
    if (stopped) return;
    const before = seen.get(handle.taskId);
    seen.set(handle.taskId, handle.status);
    if (primed && before !== handle.status) opts.send(sdkTask(handle));
    if (isTerminal(handle.status)) {
      wakes.get(handle.taskId)?.();
      wakes.delete(handle.taskId);
    } else if (!wakes.has(handle.taskId) && wakes.size < PUSHED_TASKS) {
      const id = handle.taskId;
      wakes.set(
        id,
        engine.events.on(id, () => void reread(id)),
      );
    }
  };
  const reread = async (id: string) => {
    const found = await engine.get(tenant, id).catch(() => null);
    if (found?.kind === 'found') note(found.task);
  };
  let listing = false;
  const relist = async () => {
    if (listing || stopped) return;
    listing = true;
    try {
      const page = await engine.list(tenant, { limit: String(PUSHED_TASKS) });
      if (page.kind === 'page') for (const task of page.tasks) note(task);
      primed = true;
    } catch {
      // Redis away: the next round reads again.
    } finally {
      listing = false;
    }
  };
  void relist();
  const timer = setInterval(() => void relist(), opts.relistMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
    for (const off of wakes.values()) off();
    wakes.clear();
  };
}
