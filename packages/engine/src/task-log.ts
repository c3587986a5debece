import type { Redis } from 'ioredis';
import { FIELD, type TaskEvent, type TaskStatus } from '@longrun/core';
import type { TaskKeys } from './keys.js';

/** The record fields event 1 is made of while it is not in the list, and `seq`. */
const FIRST_FIELDS = [
  FIELD.seq,
  FIELD.status,
  FIELD.statusMessage,
  FIELD.updatedAt,
  FIELD.progress,
] as const;

/**
 * A task's event list (written by the scripts with every change): what SSE streams replay and
 * webhooks deliver. Event ids are 1, 2, …; the list keeps the newest 1 000, so its first entry is
 * `seq - length + 1`. Event 1, the task as created, is not in the list until the first change
 * writes it (a create writes no list): until then it is read off the record, which still holds
 * that state.
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
      (await this.redis
        .multi()
        .hmget(this.keys.task(id), ...FIRST_FIELDS)
        .llen(key)
        .exec()) ?? [];
    const record = (replies[0]?.[1] ?? []) as (string | null)[];
    const length = Number(replies[1]?.[1] ?? 0);
    const last = Number(record[0] ?? 0);
    if (length === 0) {
      const only = firstEvent(record);
      return only && (afterId === undefined || Number(afterId) < 1) && count > 0 ? [only] : [];
    }
    const first = last - length + 1;
    const from = Math.max(afterId === undefined ? first : Number(afterId) + 1, first);
    if (from > last) return [];
    const entries = await this.redis.lrange(key, from - first, from - first + count - 1);
    return entries.map(toEvent);
  }

  /** The newest event of a task, or `null`. */
  async lastEvent(id: string): Promise<TaskEvent | null> {
    const entry = await this.redis.lindex(this.keys.events(id), -1);
    if (entry) return toEvent(entry);
    // No list: the task is as created (or gone), and event 1 is the record's state.
    return firstEvent(await this.redis.hmget(this.keys.task(id), ...FIRST_FIELDS));
  }

  /** One event by id, or `null` when it was trimmed or the task is gone. */
  async event(id: string, eventId: string): Promise<TaskEvent | null> {
    const [event] = await this.events(id, String(Number(eventId) - 1), 1);
    return event?.id === eventId ? event : null;
  }
}

/**
 * Event 1 from the record (`FIRST_FIELDS` read together with an empty list): only while the
 * record is at event 1, else `null` (gone, or a list that should be there is not).
 */
function firstEvent([seq, status, statusMessage, updatedAt, progress]: readonly (
  string | null
)[]): TaskEvent | null {
  if (seq !== '1' || !status) return null;
  const event: TaskEvent = {
    id: '1',
    status: status as TaskStatus,
    statusMessage: statusMessage ?? '',
    updatedAt: Number(updatedAt ?? 0),
  };
  if (progress) event.progress = JSON.parse(progress) as TaskEvent['progress'];
  return event;
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
