import { handleAt, isTerminal, toHandle, type HandleFields, type TaskHandle } from '@longrun/core';
import type { TaskEvents } from '../task-events.js';
import type { TaskLog } from '../task-log.js';
import type { TaskStore } from '../task-store.js';
import { notFound, type NotFound } from './outcomes.js';

export interface WatchDeps {
  store: TaskStore;
  log: TaskLog;
  /** Process-wide wake-ups (one subscriber connection per process). */
  events: TaskEvents;
  pollIntervalMs: number;
  redis<T>(operation: () => Promise<T>): Promise<T>;
  /** A watch re-checks this often whatever the wake-ups say (and streams send a heartbeat). */
  heartbeatMs: number;
}

/** Where a watch sends what it sees. */
export interface WatchSink {
  /** The handle as it was at event `eventId`. */
  send(handle: TaskHandle, eventId: string): void;
  /** Nothing new: a chance to keep the connection open. */
  heartbeat(): void;
  /** The task is terminal (its last event sent), expired or forgotten: nothing more will come. */
  end(): void;
}

/** An opened watch: the current handle (unless resuming), then `start` streams the changes. */
export interface OpenWatch {
  kind: 'open';
  /** Sent first when not resuming: the handle now and the id of the event it reflects. */
  first: { handle: TaskHandle; eventId: string } | null;
  /** Streams every event after the first (or after the resumed id); returns the stop function. */
  start(sink: WatchSink): () => void;
}

/**
 * Subscriptions to one task's changes: what SSE streams and long polls wait on. Both are woken by
 * the process-wide `TaskEvents` and read the task's event list (or handle) from Redis, so they
 * work across API replicas and worker processes; both end when the task ends, expires or is
 * forgotten, without waiting for a heartbeat.
 */
export class TaskWatch {
  constructor(private readonly deps: WatchDeps) {}

  /** Opens a watch on `id` for `tenant`, after event `after` if resuming. */
  async open(tenant: string, id: string, after?: string): Promise<OpenWatch | NotFound> {
    const { store, log } = this.deps;
    const last = after === undefined ? await this.deps.redis(() => log.lastEvent(id)) : null;
    const view = await this.deps.redis(() => store.peek(id));
    if (!view || view.tenant !== tenant) return notFound;
    const first =
      after === undefined
        ? { handle: toHandle(view, this.deps.pollIntervalMs), eventId: last?.id ?? '0' }
        : null;
    const cursor = first?.eventId ?? (after as string);
    return {
      kind: 'open',
      first,
      start: (sink) =>
        first && isTerminal(view.status)
          ? (sink.end(), () => undefined)
          : this.stream(view, cursor, sink),
    };
  }

  private stream(view: HandleFields, from: string, sink: WatchSink): () => void {
    const { store, log } = this.deps;
    const id = view.id;
    let cursor = from;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      off();
      clearInterval(heartbeat);
      clearTimeout(expiry);
      sink.end();
    };
    const pump = serialised(async () => {
      let reread = false;
      while (!closed) {
        const events = await this.deps.redis(() => log.events(id, cursor, 100));
        const latest = await this.deps.redis(() => store.peek(id));
        if (!latest) return close(); // expired or forgotten
        if (events.length === 0) {
          if (!isTerminal(latest.status)) return;
          // The record and its event are written by one script, so a terminal record means its
          // event exists; if it was not in our read, the task ended between the two reads: read
          // the events once more before deciding there is nothing left to send.
          if (reread) return close();
          reread = true;
          continue;
        }
        for (const event of events) {
          sink.send(handleAt(latest, event, this.deps.pollIntervalMs), event.id);
          cursor = event.id;
          if (isTerminal(event.status)) return close();
        }
      }
    });
    const off = this.deps.events.on(id, pump);
    const heartbeat = setInterval(() => {
      sink.heartbeat();
      pump();
    }, this.deps.heartbeatMs);
    // The task's keys expire with it: look once it is due, rather than at the next heartbeat.
    const expiry = setTimeout(pump, Math.max(0, view.createdAt + view.ttlMs - Date.now()) + 100);
    pump();
    return close;
  }

  /**
   * Holds until the task is terminal or `waitMs` passes (or `signal` aborts); the latest handle
   * fields, or `null` if the task disappeared meanwhile.
   */
  untilTerminal(
    view: HandleFields,
    waitMs: number,
    signal: AbortSignal,
  ): Promise<HandleFields | null> {
    if (isTerminal(view.status) || waitMs <= 0) return Promise.resolve(view);
    return new Promise((resolve) => {
      let current: HandleFields | null = view;
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        off();
        clearTimeout(timer);
        clearInterval(recheck);
        signal.removeEventListener('abort', finish);
        resolve(current);
      };
      const check = serialised(async () => {
        current = await this.deps.redis(() => this.deps.store.peek(view.id));
        if (!current || isTerminal(current.status)) finish();
      });
      const off = this.deps.events.on(view.id, check);
      const timer = setTimeout(finish, waitMs);
      const recheck = setInterval(check, Math.min(this.deps.heartbeatMs, 5000));
      signal.addEventListener('abort', finish);
      check(); // an event may have landed between the caller's read and our subscription
    });
  }
}

/** Wraps an async job so calls never overlap: a call during a run schedules one more run. */
function serialised(job: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const run = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    job()
      .catch(() => undefined) // Redis trouble: the next wake-up or heartbeat tries again
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          run();
        }
      });
  };
  return run;
}
