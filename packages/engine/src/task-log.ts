import type { Redis } from 'ioredis';
import { FIELD, type TaskEvent, type TaskStatus } from '@longrun/core';
import type { TaskKeys } from './keys.js';

/**
 * A task's event list (written by the scripts with every change): what SSE streams replay and
 * webhooks deliver. Event ids are 1, 2, …; the list keeps the newest 1 000, so its first entry is
 * `seq - length + 1`.
 */
export class TaskLog {
  constructor(
    private readonly redis: Redis,
    private readonly keys: TaskKeys,
  ) {}

  /** Up to `count` events after `afterId` (exclusive; `undefined` = from the oldest kept). */
  async events(id: string, afterId: string | undefined, count = 100): Promise<TaskEvent[]> {
    const key = this.keys.events(id);
    const replies =
      (await this.redis.multi().hget(this.keys.task(id), FIELD.seq).llen(key).exec()) ?? [];
    const last = Number(replies[0]?.[1] ?? 0);
    const first = last - Number(replies[1]?.[1] ?? 0) + 1;
    const from = Math.max(afterId === undefined ? first : Number(afterId) + 1, first);
    if (from > last) return [];
    const entries = await this.redis.lrange(key, from - first, from - first + count - 1);
    return entries.map(toEvent);
  }

  /** The newest event of a task, or `null`. */
  async lastEvent(id: string): Promise<TaskEvent | null> {
    const entry = await this.redis.lindex(this.keys.events(id), -1);
    return entry ? toEvent(entry) : null;
  }

  /** One event by id, or `null` when it was trimmed or the task is gone. */
  async event(id: string, eventId: string): Promise<TaskEvent | null> {
    const [event] = await this.events(id, String(Number(eventId) - 1), 1);
    return event?.id === eventId ? event : null;
  }
}

function toEvent(entry: string): TaskEvent {
  const raw = JSON.parse(entry) as { s: number; st: TaskStatus; m: string; u: number; p?: string };
  const event: TaskEvent = {
    id: String(raw.s),
    status: raw.st,
    statusMessage: raw.m,
    updatedAt: raw.u,
  };
  if (raw.p) event.progress = JSON.parse(raw.p) as TaskEvent['progress'];
  return event;
}
