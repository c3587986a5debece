import type { Request, Response } from 'express';
import {
  eventIdSchema,
  eventsQuerySchema,
  fieldErrors,
  handleAt,
  isTerminal,
  Problem,
  toHandle,
  type TaskHandle,
  type TaskRecord,
} from '@longrun/core';
import { guard, type TaskEvents, type TaskQueue } from '@longrun/engine';

export interface TaskStreamOptions {
  tasks: TaskQueue;
  events: TaskEvents;
  pollIntervalMs: number;
  redisTimeoutMs: number;
  /** Comment line sent this often so proxies keep the connection open; also a safety re-check. */
  heartbeatMs?: number;
}

/**
 * Server-sent events and long polls for one task. Both wait on the process-wide `TaskEvents`
 * wake-ups and read the task's event stream (or record) from Redis, so they work across API
 * replicas and worker processes and do not hold a Redis connection each.
 */
export class TaskStream {
  constructor(private readonly opts: TaskStreamOptions) {}

  /**
   * Holds until the task is terminal or `waitMs` passes (or the client leaves); returns the
   * latest record, or `null` if the task disappeared meanwhile.
   */
  async untilTerminal(
    record: TaskRecord,
    waitMs: number,
    signal: AbortSignal,
  ): Promise<TaskRecord | null> {
    if (isTerminal(record.status) || waitMs <= 0) return record;
    return new Promise((resolve) => {
      let current: TaskRecord | null = record;
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
        current = await this.redis(() => this.opts.tasks.store.get(record.id));
        if (!current || isTerminal(current.status)) finish();
      });
      const off = this.opts.events.on(record.id, check);
      const timer = setTimeout(finish, waitMs);
      const recheck = setInterval(check, this.opts.heartbeatMs ?? 5000);
      signal.addEventListener('abort', finish);
      check(); // an event may have landed between the caller's read and our subscription
    });
  }

  /** Streams the task's handle, then one event per change, until the terminal event. */
  async serve(record: TaskRecord, req: Request, res: Response): Promise<void> {
    let cursor = this.lastEventId(req);
    const store = this.opts.tasks.store;
    const id = record.id;
    // Read before writing headers, so a Redis failure is still a clean 503.
    const first = cursor === undefined ? await this.redis(() => store.lastEvent(id)) : null;
    const fresh = cursor === undefined ? await this.redis(() => store.get(id)) : record;

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(`retry: ${this.opts.pollIntervalMs}\n\n`);
    const send = (handle: TaskHandle, eventId: string | undefined) => {
      res.write(
        `${eventId ? `id: ${eventId}\n` : ''}event: task\ndata: ${JSON.stringify(handle)}\n\n`,
      );
    };

    let closed = false;
    let cleanup: () => void = () => undefined;
    const end = () => {
      if (closed) return;
      closed = true;
      cleanup();
      res.end();
    };
    res.on('close', end);

    if (cursor === undefined) {
      if (!fresh) return end();
      send(toHandle(fresh, this.opts.pollIntervalMs), first?.id ?? '0');
      cursor = first?.id ?? '0';
      if (isTerminal(fresh.status)) return end();
    }

    const pump = serialised(async () => {
      while (!closed) {
        const events = await this.redis(() => store.events(id, cursor, 100));
        if (events.length === 0) return;
        const latest = await this.redis(() => store.get(id));
        if (!latest) return end(); // expired or forgotten
        for (const event of events) {
          send(handleAt(latest, event, this.opts.pollIntervalMs), event.id);
          cursor = event.id;
          if (isTerminal(event.status)) return end();
        }
      }
    });
    const off = this.opts.events.on(id, pump);
    const heartbeat = setInterval(() => {
      res.write(': ping\n\n');
      pump();
    }, this.opts.heartbeatMs ?? 15_000);
    cleanup = () => {
      off();
      clearInterval(heartbeat);
    };
    pump();
  }

  private lastEventId(req: Request): string | undefined {
    const query = eventsQuerySchema.safeParse(req.query);
    if (!query.success) throw badRequest(fieldErrors(query.error));
    const header = req.headers['last-event-id'];
    if (header === undefined) return query.data.lastEventId;
    const parsed = eventIdSchema.safeParse(header);
    if (!parsed.success) throw badRequest(fieldErrors(parsed.error, 'Last-Event-ID'));
    return parsed.data;
  }

  private redis<T>(operation: () => Promise<T>): Promise<T> {
    return guard(operation, this.opts.redisTimeoutMs);
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

function badRequest(errors: { path: string; message: string }[]): Problem {
  return new Problem({
    status: 400,
    title: 'Bad Request',
    detail: 'Invalid request',
    code: 'invalid-request',
    errors,
  });
}
