import type { Redis } from 'ioredis';
import {
  eventField,
  eventStepField,
  FIELD,
  type StepSummary,
  type TaskEvent,
  type TaskStatus,
} from '@longrun/core';
import type { TaskKeys } from './keys.js';

/** The record's fields its newest event is made of, `seq` (its id) first. */
const STATE_FIELDS = [
  FIELD.seq,
  FIELD.status,
  FIELD.statusMessage,
  FIELD.updatedAt,
  FIELD.progress,
] as const;

/** How many events a task keeps (`HISTORY` in lua/includes/write-event.lua). */
const HISTORY = 1000;

/** What one read of a task's history found. */
interface HistoryRead {
  /** The newest event's id (the record's `seq`; 0 for a record an older version made without). */
  seq: number;
  /** The newest event: the record's own state. */
  current: TaskEvent | null;
  /** The earlier events of the window read, by id (fields `e<n>` of the record). */
  past: Map<number, TaskEvent>;
  /** Entries of an event list an older version wrote (empty for a task this version made). */
  legacy: TaskEvent[];
}

/**
 * A task's history, as every reader sees it (SSE streams replay it, webhooks deliver it, the
 * doors list it). It is kept in one place, the record (decision 57): the record's own state is
 * the newest event (id = its `seq`), and each earlier one is a field `e<n>` written by the one
 * event writer (`lua/includes/write-event.lua`) in the same step as the change; the newest
 * 1 000 are kept. A task of the previous version may also have an event list (events 1..n, the
 * n-th its state then) and, finished by its first change, an `e1` field: both read the same way,
 * the list merged by id, until those tasks expire.
 */
export class TaskLog {
  constructor(
    private readonly redis: Redis,
    private readonly keys: TaskKeys,
  ) {}

  /** Up to `count` events after `afterId` (exclusive; `undefined` = from the oldest kept). */
  async events(id: string, afterId: string | undefined, count = 100): Promise<TaskEvent[]> {
    if (count <= 0) return [];
    let from = afterId === undefined ? 1 : Number(afterId) + 1;
    let read = await this.read(id, from, count);
    if (!read) return [];
    // Trimmed past the window asked for: read from the oldest kept instead (rare: 1 000 events).
    const oldest = read.seq - HISTORY + 1;
    if (from < oldest && read.legacy.length === 0) {
      from = oldest;
      read = await this.read(id, from, count);
      if (!read) return [];
    }
    const byId = new Map<number, TaskEvent>();
    for (const event of read.legacy) byId.set(Number(event.id), event);
    for (const [n, event] of read.past) byId.set(n, event);
    if (read.current) byId.set(read.seq, read.current);
    return [...byId.entries()]
      .filter(([n]) => n >= from)
      .sort(([a], [b]) => a - b)
      .slice(0, count)
      .map(([, event]) => event);
  }

  /** The newest event of a task, or `null` (gone). */
  async lastEvent(id: string): Promise<TaskEvent | null> {
    const state = await this.redis.hmget(this.keys.task(id), ...STATE_FIELDS);
    const current = stateEvent(state);
    if (current || !state[1]) return current;
    // A record an older version made without `seq`: its list's last entry.
    const entry = await this.redis.lindex(this.keys.events(id), -1);
    return entry ? toEvent(entry) : null;
  }

  /** One event by id, or `null` when it was trimmed or the task is gone. */
  async event(id: string, eventId: string): Promise<TaskEvent | null> {
    const [event] = await this.events(id, String(Number(eventId) - 1), 1);
    return event?.id === eventId ? event : null;
  }

  /**
   * One round trip: the record's state and its event fields `e<from>` … (as many as `count`, at
   * most the history kept: one HMGET, so one consistent state), and the length of an older
   * version's list, read whole if there is one (a task of the previous version, until it
   * expires; only ever deleted since). A pipeline, not a MULTI: Redis refuses every command
   * queued in a transaction once it is past maxmemory, reads too, and a full Redis must still
   * answer a task's history (tests/redis-full-reads.test.ts).
   */
  private async read(id: string, from: number, count: number): Promise<HistoryRead | null> {
    const window = Array.from({ length: Math.min(count, HISTORY) }, (_, i) => from + i);
    const replies =
      (await this.redis
        .pipeline()
        .hmget(
          this.keys.task(id),
          ...STATE_FIELDS,
          ...window.map(eventField),
          // The step each event recorded or changed, if any (issue 40).
          ...window.map(eventStepField),
        )
        .llen(this.keys.events(id))
        .exec()) ?? [];
    const values = (replies[0]?.[1] ?? []) as (string | null)[];
    if (!values[1]) return null;
    const state = values.slice(0, STATE_FIELDS.length);
    const past = new Map<number, TaskEvent>();
    const steps = STATE_FIELDS.length + window.length;
    window.forEach((n, i) => {
      const entry = values[STATE_FIELDS.length + i];
      if (entry) past.set(n, withStep(toEvent(entry), values[steps + i]));
    });
    const listed = Number(replies[1]?.[1] ?? 0);
    const legacy =
      listed > 0 ? (await this.redis.lrange(this.keys.events(id), 0, -1)).map(toEvent) : [];
    const seq = Number(state[0] ?? 0);
    const current = stateEvent(state);
    const at = window.indexOf(seq);
    if (current && at >= 0) withStep(current, values[steps + at]);
    return { seq, current, past, legacy };
  }
}

/** The newest event, from the record's `STATE_FIELDS`; `null` without a status or a `seq`. */
function stateEvent([seq, status, statusMessage, updatedAt, progress]: readonly (
  string | null | undefined
)[]): TaskEvent | null {
  if (!status || !seq || seq === '0') return null;
  const event: TaskEvent = {
    id: seq,
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

/** `event` with the step it recorded or changed (`step`, that step's JSON), if any. */
function withStep(event: TaskEvent, step: string | null | undefined): TaskEvent {
  if (step) event.step = JSON.parse(step) as StepSummary;
  return event;
}
