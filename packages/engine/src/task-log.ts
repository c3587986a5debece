import type { Redis } from 'ioredis';
import { FIELD, type TaskEvent, type TaskStatus } from '@longrun/core';
import type { TaskKeys } from './keys.js';

/**
 * The record fields the events are made of while there is no list: `seq`, the record's state
 * (event 1, or event 2 of a task finished by its first change), and that task's event 1.
 */
const FIRST_FIELDS = [
  FIELD.seq,
  FIELD.status,
  FIELD.statusMessage,
  FIELD.updatedAt,
  FIELD.progress,
  FIELD.firstEvent,
] as const;

/**
 * A task's event list (written by the scripts with every change): what SSE streams replay and
 * webhooks deliver. Event ids are 1, 2, …; the list keeps the newest 1 000, so its first entry is
 * `seq - length + 1`. Event 1, the task as created, is not in the list until the first change
 * writes it (a create writes no list): until then it is read off the record, which still holds
 * that state. A task finished by its first change (a worker's completion) gets no list at all:
 * event 1 is kept in the record (`FIELD.firstEvent`) and event 2 is the record's state.
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
      const from = afterId === undefined ? 0 : Number(afterId);
      return recordEvents(record)
        .filter((e) => Number(e.id) > from)
        .slice(0, Math.max(count, 0));
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
    // No list: the task is as created, or finished by its first change (or gone).
    return recordEvents(await this.redis.hmget(this.keys.task(id), ...FIRST_FIELDS)).pop() ?? null;
  }

  /** One event by id, or `null` when it was trimmed or the task is gone. */
  async event(id: string, eventId: string): Promise<TaskEvent | null> {
    const [event] = await this.events(id, String(Number(eventId) - 1), 1);
    return event?.id === eventId ? event : null;
  }
}

/**
 * The events a record holds while there is no list (`FIRST_FIELDS` read together with an empty
 * list): event 1 while the record is at event 1; events 1 and 2 once a first change finished it
 * (event 1 kept in `FIELD.firstEvent`); else none (gone, or a list that should be there is not).
 */
function recordEvents([seq, status, statusMessage, updatedAt, progress, first]: readonly (
  string | null
)[]): TaskEvent[] {
  if (!status || (seq !== '1' && !(seq === '2' && first))) return [];
  const event: TaskEvent = {
    id: seq,
    status: status as TaskStatus,
    statusMessage: statusMessage ?? '',
    updatedAt: Number(updatedAt ?? 0),
  };
  if (progress) event.progress = JSON.parse(progress) as TaskEvent['progress'];
  return first ? [toEvent(first), event] : [event];
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
