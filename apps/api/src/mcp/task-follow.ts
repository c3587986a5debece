import { isTerminal, type TaskHandle } from '@longrun/core';
import type { TaskEngine } from '@longrun/engine';

export interface FollowOptions {
  /** The most to wait (ms); 0 reads the task once. */
  waitMs: number;
  /**
   * Stop at the first change of status, or at once when the task waits for input (else only when
   * the task ends).
   */
  untilStatusChange: boolean;
  /** Stop when the task waits for input (at once, or when it comes to ask). */
  untilInput?: boolean | undefined;
  /** Stops the wait (the client is gone). */
  signal: AbortSignal;
  /** The handle when the wait starts, then each one the task's event list shows (progress, status). */
  onUpdate?: ((handle: TaskHandle) => void) | undefined;
}

/**
 * Follows a task through the engine's watch (woken by the task's events, on any replica) until it
 * ends, changes status (when asked), `waitMs` passes or `signal` aborts; resolves with the latest
 * handle seen, or null when the task is not the tenant's (unknown, expired, another tenant's).
 * @example await followTask(engine, 'acme', id, { waitMs: 30_000, untilStatusChange: true, signal })
 */
export async function followTask(
  engine: TaskEngine,
  tenant: string,
  taskId: string,
  opts: FollowOptions,
): Promise<TaskHandle | null> {
  const watch = await engine.watch(tenant, taskId);
  if (watch.kind === 'notFound' || !watch.first) return null;
  const first = watch.first.handle;
  if (isTerminal(first.status) || opts.waitMs <= 0 || opts.signal.aborted) return first;
  // A task that waits for input waits for the caller: answer now rather than hold the call.
  const untilInput = opts.untilStatusChange || opts.untilInput === true;
  if (untilInput && first.status === 'input_required') return first;
  // What the task already shows counts: progress reported before the watch opened is sent too.
  opts.onUpdate?.(first);
  return new Promise((resolve) => {
    let latest = first;
    let settled = false;
    const watching: { stop?: () => void } = {}; // set once start returns
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', finish);
      watching.stop?.();
      resolve(latest);
    };
    const timer = setTimeout(finish, opts.waitMs);
    opts.signal.addEventListener('abort', finish, { once: true });
    watching.stop = watch.start({
      send(handle) {
        if (settled) return;
        latest = handle;
        opts.onUpdate?.(handle);
        const changed = opts.untilStatusChange && handle.status !== first.status;
        const asks = opts.untilInput === true && handle.status === 'input_required';
        if (changed || asks || isTerminal(handle.status)) finish();
      },
      heartbeat: () => undefined,
      end: finish,
    });
    if (settled) watching.stop();
  });
}

/**
 * Turns the task's updates into MCP `notifications/progress` for a request that carried
 * `_meta.progressToken`: a numeric progress (a percent) is sent when it grows, with `total: 100`
 * and the status message (the specification wants each value above the last).
 * @example progressNotifier('tok', (n) => extra.sendNotification(n))
 */
export function progressNotifier(
  token: string | number | undefined,
  send: (notification: ProgressNotification) => Promise<void>,
): ((handle: TaskHandle) => void) | undefined {
  if (token === undefined) return undefined;
  let last = -Infinity;
  return (handle) => {
    const progress = handle.progress;
    if (typeof progress !== 'number' || progress <= last) return;
    last = progress;
    send({
      method: 'notifications/progress',
      params: { progressToken: token, progress, total: 100, message: handle.statusMessage },
    }).catch(() => undefined); // the stream is gone: the call's own answer says the rest
  };
}

export interface ProgressNotification {
  method: 'notifications/progress';
  params: { progressToken: string | number; progress: number; total: number; message: string };
}

/** The request's `_meta.progressToken`, if it has a valid one. */
export function progressTokenOf(params: unknown): string | number | undefined {
  if (typeof params !== 'object' || params === null) return undefined;
  const meta = (params as { _meta?: unknown })._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  const token = (meta as { progressToken?: unknown }).progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}
