import type { Redis } from 'ioredis';
import {
  CorruptRecordError,
  decodeHandle,
  decodeRecord,
  FIELD,
  HANDLE_FIELDS,
  stepEntryField,
  type HandleFields,
  type StepSummary,
  type TaskRecord,
} from '@longrun/core';
import type { TaskKeys } from './keys.js';

/** The record's own fields (its history aside, decision 57): what `get` reads. */
const RECORD_FIELDS = Object.values(FIELD);

/**
 * The reads of longrun's task records (plain commands, no script): who owns a task, its handle
 * (a poll is one `HMGET`), the whole record, a tenant's stored bytes. `TaskStore` adds the
 * writes.
 */
export class TaskReads {
  constructor(
    protected readonly redis: Redis,
    readonly keys: TaskKeys,
  ) {}

  /** Who owns the task and whether it has a callback (one small `HMGET`), or `null` once gone. */
  async owner(id: string): Promise<{ tenant: string; hasCallback: boolean } | null> {
    const [tenant, callback] = await this.redis.hmget(
      this.keys.task(id),
      FIELD.tenant,
      FIELD.callback,
    );
    return tenant ? { tenant, hasCallback: Boolean(callback) } : null;
  }

  /**
   * Who owns the task and where its status changes are POSTed (one small `HMGET`), or `null`
   * once gone.
   */
  async callback(
    id: string,
  ): Promise<{ tenant: string; callback: TaskRecord['callback'] | undefined } | null> {
    const [tenant, callback] = await this.redis.hmget(
      this.keys.task(id),
      FIELD.tenant,
      FIELD.callback,
    );
    if (!tenant) return null;
    if (!callback) return { tenant, callback: undefined };
    try {
      return { tenant, callback: JSON.parse(callback) as TaskRecord['callback'] };
    } catch {
      throw new CorruptRecordError(`task ${id}: field ${FIELD.callback} is not JSON`);
    }
  }

  /** Bytes each tenant's stored tasks take, as counted for its storage budget (one round trip). */
  async storedBytes(tenants: readonly string[]): Promise<Map<string, number>> {
    const pipeline = this.redis.pipeline();
    for (const tenant of tenants) pipeline.hget(this.keys.usage(tenant), '#total');
    const replies = (await pipeline.exec()) ?? [];
    return new Map(tenants.map((t, i) => [t, Number(replies[i]?.[1] ?? 0)]));
  }

  /** The record, or `null` once it is gone (never created, expired or forgotten). */
  async get(id: string): Promise<TaskRecord | null> {
    const values = await this.redis.hmget(this.keys.task(id), ...RECORD_FIELDS);
    const hash: Record<string, string> = {};
    RECORD_FIELDS.forEach((field, i) => {
      const value = values[i];
      if (value !== null && value !== undefined) hash[field] = value;
    });
    return decodeRecord(id, hash);
  }

  /**
   * What a handle shows of a record (one `HMGET`), or `null` once it is gone: a poll's read, which
   * neither moves nor parses the input and answers, whatever their size.
   */
  async peek(id: string): Promise<HandleFields | null> {
    return decodeHandle(id, await this.redis.hmget(this.keys.task(id), ...HANDLE_FIELDS));
  }

  /**
   * What {@link peek} reads, with the record's event number (`seq`) in the same read: pass it to
   * `transition` as `ifSeq` to act only on the record as it was read.
   */
  async peekAt(id: string): Promise<{ view: HandleFields; seq: string } | null> {
    const values = await this.redis.hmget(this.keys.task(id), ...HANDLE_FIELDS, FIELD.seq);
    const view = decodeHandle(id, values.slice(0, HANDLE_FIELDS.length));
    return view ? { view, seq: values[HANDLE_FIELDS.length] ?? '' } : null;
  }

  /**
   * Up to `limit` of a durable task's steps from step `from` (1, 2, …), its tenant and its step
   * count, in one `HMGET` (issue 40); `null` once the task is gone. A record an older version
   * wrote keeps its whole list in one field: it is sliced.
   */
  async steps(
    id: string,
    from: number,
    limit: number,
  ): Promise<{ tenant: string; count: number; steps: StepSummary[] } | null> {
    const entries = Array.from({ length: limit }, (_, i) => stepEntryField(from + i));
    const [tenant, count, legacy, ...values] = await this.redis.hmget(
      this.keys.task(id),
      FIELD.tenant,
      FIELD.stepCount,
      FIELD.steps,
      ...entries,
    );
    if (!tenant) return null;
    if (!count && legacy) {
      const all = JSON.parse(legacy) as StepSummary[];
      return { tenant, count: all.length, steps: all.slice(from - 1, from - 1 + limit) };
    }
    const steps = values.flatMap((v) => (v ? [JSON.parse(v) as StepSummary] : []));
    return { tenant, count: Number(count ?? 0), steps };
  }

  /** The BullMQ priority the task was submitted with, if any. */
  async priority(id: string): Promise<number | undefined> {
    const value = await this.redis.hget(this.keys.task(id), FIELD.priority);
    return value ? Number(value) : undefined;
  }
}
