import type { Redis } from 'ioredis';
import {
  decodeHandle,
  HANDLE_FIELDS,
  SUMMARY_FIELDS,
  type HandleFields,
  type TaskStatus,
} from '@longrun/core';
import type { TaskKeys } from './keys.js';

/** Most index entries one list request reads while filtering by status. */
export const LIST_SCAN_LIMIT = 1000;

export interface ListQuery {
  status?: TaskStatus | undefined;
  /** Only tasks of this job type. */
  type?: string | undefined;
  /** Only tasks made by this schedule's ticks. */
  scheduleId?: string | undefined;
  /** Only tasks carrying this tag: read from the tag's own index, not filtered from the tenant's. */
  tag?: string | undefined;
  limit: number;
  /** The index member to continue after (exclusive), as the previous page's cursor named it. */
  after?: string | undefined;
  /** `full`: each item with its result, as its own `GET` shows it. */
  view?: 'summary' | 'full' | undefined;
}

/**
 * A tenant's tasks, newest first, from its index (a sorted set of `<inverted time>:<id>`). A page
 * reads, for each entry, only the fields a summary shows (`SUMMARY_FIELDS`: no result, input or
 * answers), so it costs the same whatever the records weigh; the status, type and schedule filters
 * work on the same read. A tag filter walks the tag's own index (`TaskKeys.tagIndex`, the same
 * members), so it reads only tasks that carry the tag.
 */
export class TaskIndex {
  constructor(
    private readonly redis: Redis,
    private readonly keys: TaskKeys,
  ) {}

  /** One page; `next` is the member to continue after, `null` at the end. */
  async page(
    tenant: string,
    query: ListQuery,
  ): Promise<{ tasks: HandleFields[]; next: string | null }> {
    const { status, type, scheduleId, limit } = query;
    const index =
      query.tag === undefined ? this.keys.index(tenant) : this.keys.tagIndex(tenant, query.tag);
    const fields = query.view === 'full' ? HANDLE_FIELDS : SUMMARY_FIELDS;
    let after = query.after;
    const tasks: HandleFields[] = [];
    let scanned = 0;
    const batch = Math.min(Math.max(limit * 2, 50), 500);
    while (tasks.length < limit && scanned < LIST_SCAN_LIMIT) {
      const members = await this.members(index, after, batch);
      if (members.length === 0) return { tasks, next: null };
      const pipeline = this.redis.pipeline();
      for (const member of members) pipeline.hmget(this.keys.task(memberId(member)), ...fields);
      const replies = (await pipeline.exec()) ?? [];
      const gone: string[] = [];
      for (const [i, member] of members.entries()) {
        const [error, values] = replies[i] ?? [null, []];
        if (error) throw error;
        const view = decodeHandle(memberId(member), values as (string | null)[]);
        // A list item carries no steps (issue 40), summary or full: the task's own GET has them.
        if (view) delete view.steps;
        scanned += 1;
        after = member;
        if (!view) gone.push(member);
        else if (
          (status === undefined || view.status === status) &&
          (type === undefined || view.type === type) &&
          (scheduleId === undefined || view.scheduleId === scheduleId)
        ) {
          tasks.push(view);
        }
        if (tasks.length === limit) break;
      }
      if (gone.length > 0) await this.redis.zrem(index, ...gone);
      if (members.length < batch && tasks.length < limit) return { tasks, next: null };
    }
    return { tasks, next: after ?? null };
  }

  /** A page of an index's members after `after` (exclusive), newest first. */
  private members(index: string, after: string | undefined, count: number): Promise<string[]> {
    return this.redis.zrangebylex(
      index,
      after === undefined ? '-' : `(${after}`,
      '+',
      'LIMIT',
      0,
      count,
    );
  }
}

/** An index member's task id (after `<13 digits>:`). */
function memberId(member: string): string {
  return member.slice(14);
}
