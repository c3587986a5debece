import { afterEach, expect } from 'vitest';
import { waitFor } from './http.js';
import type { Proc } from './processes.js';
import type { InProcessApi } from './service.js';

// The few steps most process-level task tests share: the APIs and worker processes a file
// starts, stopped after each test, and submit / read / wait on a task as tenant "alpha".

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a task handle as JSON
export type HandleJson = any;

/** Whether a handle's status is one a task ends in. */
export const terminal = (h: { status: string }): boolean =>
  ['completed', 'failed', 'cancelled'].includes(h.status);

/**
 * Keeps what a test file starts and stops it after each test: worker processes (SIGKILL) first,
 * then the in-process APIs. Call once at the file's top level.
 * @example const started = stopAfterEach(); const a = started.api(await startInProcessApi());
 */
export function stopAfterEach(): {
  api(a: InProcessApi): InProcessApi;
  proc<T extends Proc>(p: T): T;
} {
  const apis: InProcessApi[] = [];
  const procs: Proc[] = [];
  afterEach(async () => {
    await Promise.allSettled(procs.splice(0).map((p) => p.kill()));
    await Promise.allSettled(apis.splice(0).map((a) => a.close()));
  });
  return {
    api: (a) => (apis.push(a), a),
    proc: (p) => (procs.push(p), p),
  };
}

/** Submits `body`; the task id (a `202` is expected). */
export async function submitTask(a: InProcessApi, body: unknown): Promise<string> {
  const res = await a.http('POST', '/v1/jobs', { body });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId as string;
}

/** The task's handle (a `200` is expected). */
export async function handleOf(a: InProcessApi, id: string): Promise<HandleJson> {
  const res = await a.http('GET', `/v1/jobs/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Reads the handle every 50 ms until `check` holds; returns that handle. */
export function untilHandle(
  a: InProcessApi,
  id: string,
  check: (h: HandleJson) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<HandleJson> {
  return waitFor(
    async () => {
      const h = await handleOf(a, id);
      return check(h) ? h : undefined;
    },
    { timeoutMs, intervalMs: 50, what: `task ${id}: ${what}` },
  );
}
