import {
  isTerminal,
  MAX_RESULT_WAIT_SECONDS,
  taskHandleSchema,
  taskResultSchema,
  type TaskHandle,
} from '@longrun/core';
import { LongrunError, LongrunNetworkError } from './errors.js';
import { anySignal, backoffDelay, delay, isTransientStatus, parseRetryAfter } from './retry.js';
import type { Transport } from './transport.js';

export interface WaitOptions {
  /** Stops waiting (not the task); `wait` then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Gives up after this long, rejecting with a `TimeoutError` (the task goes on). */
  timeoutMs?: number;
  /** Called with the first handle and then with every handle that differs from the last. */
  onUpdate?: (task: TaskHandle) => void;
  /**
   * Also return when the task asks for input (`input_required`), so the caller can answer it.
   * Default true; with false, `wait` waits through it until the task is terminal.
   */
  returnOnInputRequired?: boolean;
  /**
   * Hold `GET …/result?wait=` requests instead of polling the handle, where the server supports
   * it. Default true, unless `onUpdate` is given (progress is only seen on the handle). Each hold
   * lasts one poll interval, so a task that turns `input_required` is noticed as fast as by
   * polling, and a finished one at once.
   */
  longPoll?: boolean;
}

/**
 * Waits for a task to finish (or ask for input) and returns its last handle. Requests are spaced
 * by the task's `pollIntervalMs` / `Retry-After` (never faster); 429/503 and network failures
 * are ridden out with backoff; other errors (404, 401) reject.
 */
export async function waitForTask(
  transport: Transport,
  id: string,
  opts: WaitOptions = {},
): Promise<TaskHandle> {
  const timeout = opts.timeoutMs === undefined ? undefined : AbortSignal.timeout(opts.timeoutMs);
  const signal = anySignal(opts.signal, timeout);
  const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
  const returnOnInput = opts.returnOnInputRequired ?? true;
  const path = `v1/jobs/${encodeURIComponent(id)}`;
  const done = (status: TaskHandle['status']) =>
    isTerminal(status) || (returnOnInput && status === 'input_required');

  let longPoll = (opts.longPoll ?? true) && opts.onUpdate === undefined;
  let needHandle = true; // the next request reads the handle (first, and after a long-poll ends)
  let intervalMs = 1000; // until the first handle says otherwise
  let failures = 0;
  let nextAt = 0;
  let lastSeen = '';

  for (;;) {
    await delay(nextAt - Date.now(), signal);
    const started = Date.now();
    let held = false;
    try {
      // One held request per poll interval: as few requests as polling, but a finish is seen
      // at once, and an `input_required` (which does not end the hold) within one interval.
      const holdSeconds = Math.min(
        MAX_RESULT_WAIT_SECONDS,
        Math.ceil(intervalMs / 1000),
        Math.floor((deadline - started) / 1000),
      );
      if (needHandle || !longPoll || holdSeconds < 1) {
        const reply = await transport.request({
          method: 'GET',
          path,
          retry: false,
          signal,
          schema: taskHandleSchema,
        });
        const task = reply.data;
        const seen = JSON.stringify([
          task.status,
          task.statusMessage,
          task.progress,
          task.lastUpdatedAt,
        ]);
        if (seen !== lastSeen) opts.onUpdate?.(task);
        lastSeen = seen;
        if (done(task.status)) return task;
        const retryAfter = parseRetryAfter(reply.headers.get('retry-after')) ?? 0;
        intervalMs = Math.max(task.pollIntervalMs, retryAfter * 1000, 1);
        needHandle = false;
        // A held request may start at once (the server paces it); a poll waits its interval.
        nextAt = longPoll ? started : started + intervalMs;
      } else {
        held = true;
        const outcome = await holdForResult(transport, path, holdSeconds, signal, returnOnInput);
        needHandle = outcome.readHandle;
        if (!needHandle) nextAt = started + Math.max(intervalMs, outcome.retryAfter * 1000);
      }
      failures = 0;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (held && error instanceof LongrunError && error.status === 400) {
        // The server refuses `?wait=`: poll the handle instead.
        longPoll = false;
        nextAt = started + intervalMs;
        continue;
      }
      if (!isTransient(error)) throw error;
      nextAt =
        Date.now() +
        Math.max(intervalMs, backoffDelay(failures++, transport.retry, error.retryAfter));
    }
  }
}

/**
 * One held `GET …/result?wait=`. `readHandle`: the handle should be read now (the task is
 * terminal, or asks for input and the caller wants to know).
 */
async function holdForResult(
  transport: Transport,
  path: string,
  seconds: number,
  signal: AbortSignal | undefined,
  returnOnInput: boolean,
): Promise<{ readHandle: boolean; retryAfter: number }> {
  try {
    await transport.request({
      method: 'GET',
      path: `${path}/result`,
      query: { wait: seconds },
      retry: false,
      signal,
      schema: taskResultSchema,
      extraTimeoutMs: seconds * 1000,
    });
    return { readHandle: true, retryAfter: 0 };
  } catch (error) {
    if (!(error instanceof LongrunError) || error.status !== 409) throw error;
    const inputRequired = error.problem.taskStatus === 'input_required';
    return { readHandle: returnOnInput && inputRequired, retryAfter: error.retryAfter ?? 0 };
  }
}

function isTransient(error: unknown): error is LongrunError {
  return (
    error instanceof LongrunNetworkError ||
    (error instanceof LongrunError && isTransientStatus(error.status))
  );
}
