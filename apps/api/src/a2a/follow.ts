import type { TaskHandle } from '@longrun/core';
import type { OpenWatch } from '@longrun/engine';

/**
 * The engine's watch of one task as an async iterator of handles: the current one first, then
 * one per change, until the task ends (or expires, or is forgotten) or `signal` aborts (the
 * caller went away); `idle` runs on each of the watch's heartbeats (every 15 s). The watch reads
 * Redis and is woken by the process's subscriber, so a task followed on one replica may be
 * changed from any other; leaving the loop early stops it.
 * @example for await (const handle of follow(watch, signal)) if (handle.status !== 'working') break;
 */
export async function* follow(
  watch: OpenWatch,
  signal: AbortSignal,
  idle: () => void = () => undefined,
): AsyncGenerator<TaskHandle> {
  const pending: TaskHandle[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const stop = watch.start({
    send: (handle) => {
      pending.push(handle);
      notify();
    },
    heartbeat: idle,
    end: () => {
      ended = true;
      notify();
    },
  });
  signal.addEventListener('abort', notify);
  try {
    if (watch.first) yield watch.first.handle;
    for (;;) {
      if (signal.aborted) return;
      const next = pending.shift();
      if (next) {
        yield next;
        continue;
      }
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    stop();
    signal.removeEventListener('abort', notify);
  }
}
