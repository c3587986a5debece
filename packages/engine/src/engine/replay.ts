import { fieldErrors, replayRequestSchema, type HandleFields } from '@longrun/core';
import { StoreFullError, StoreUnavailableError } from '../errors.js';
import { indexMemberTime } from '../keys.js';
import type { BatchItemOutcome } from './batch.js';
import { mergedPage } from './merged-page.js';
import { invalid, notFound, type Invalid, type NotFound, type SubmitOutcome } from './outcomes.js';
import type { ShardSet } from './shard-set.js';
import type { SubmitOptions } from './submit.js';

/** One task's replay in a batch: the task replayed, and what its new task's submit gave. */
export interface ReplayItem {
  taskId: string;
  outcome: BatchItemOutcome | NotFound;
}

export type ReplayBatchOutcome = { kind: 'replayed'; results: ReplayItem[] } | Invalid;

/** Most index pages a batch replay walks looking for matches (each scans up to 1000 entries). */
const MAX_PAGES = 10;

/** What a replay needs of the engine. */
export interface ReplayDeps {
  shards: ShardSet;
  submit(tenant: string, body: unknown, opts: SubmitOptions): Promise<SubmitOutcome>;
  redis<T>(operation: () => Promise<T>): Promise<T>;
}

/**
 * Replays: a new task with a finished (or any) task's type, input, ttl, timeout and tags,
 * submitted as `POST /v1/jobs` would be (the input is checked against the type's schema as it is
 * now, so a replay after a fix is validated by the fixed type). The new task names the old one
 * (`replayOf`). Not copied: the callback (its secret stays with the task that was given it), the
 * delay, the priority and the idempotency key.
 */
export class Replays {
  constructor(private readonly deps: ReplayDeps) {}

  /** Replays one task of `tenant` (another tenant's, or a missing one, is `notFound`). */
  async one(
    tenant: string,
    id: string,
    opts: { requestId?: string | undefined } = {},
  ): Promise<SubmitOutcome | NotFound> {
    const shard = this.deps.shards.of(id);
    const record = await this.deps.redis(() => shard.store.get(id));
    if (!record || record.tenant !== tenant) return notFound;
    const body = {
      type: record.type,
      input: record.input,
      ttlMs: record.ttlMs,
      ...(record.timeoutMs !== undefined ? { timeoutMs: record.timeoutMs } : {}),
      ...(record.tags?.length ? { tags: record.tags } : {}),
    };
    return this.deps.submit(tenant, body, { requestId: opts.requestId, replayOf: id });
  }

  /**
   * Replays up to `limit` of the tenant's tasks matching `filter` (newest first, created at or
   * after `since`), each on its own: one task's refusal does not stop the others.
   */
  async many(
    tenant: string,
    body: unknown,
    opts: { requestId?: string | undefined } = {},
  ): Promise<ReplayBatchOutcome> {
    const parsed = replayRequestSchema.safeParse(body);
    if (!parsed.success) {
      return invalid(400, 'The request body is invalid', fieldErrors(parsed.error));
    }
    const { filter, limit } = parsed.data;
    const since = filter.since === undefined ? undefined : Date.parse(filter.since);
    const tasks = await this.matching(tenant, { ...filter, since }, limit);
    const settled = await Promise.allSettled(tasks.map((t) => this.one(tenant, t.id, opts)));
    const results = settled.map((s, i): ReplayItem => {
      const taskId = (tasks[i] as HandleFields).id;
      if (s.status === 'fulfilled') return { taskId, outcome: s.value };
      if (s.reason instanceof StoreUnavailableError)
        return { taskId, outcome: { kind: 'unavailable' } };
      if (s.reason instanceof StoreFullError) return { taskId, outcome: { kind: 'storeFull' } };
      return { taskId, outcome: { kind: 'error', error: s.reason } };
    });
    return { kind: 'replayed', results };
  }

  /** Up to `limit` tasks matching the filter, newest first, read page by page from the index. */
  private async matching(
    tenant: string,
    filter: { status?: HandleFields['status']; type?: string; tag?: string; since?: number },
    limit: number,
  ): Promise<HandleFields[]> {
    const { since, ...wanted } = filter;
    const found: HandleFields[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < MAX_PAGES && found.length < limit; pages += 1) {
      const page = await this.deps.redis(() =>
        mergedPage(this.deps.shards.configured, tenant, {
          ...wanted,
          limit: limit - found.length,
          after,
        }),
      );
      for (const task of page.tasks) {
        if (since !== undefined && task.createdAt < since) return found;
        found.push(task);
      }
      if (page.next === null) break;
      // The index is newest first: past `since`, nothing further can match.
      if (since !== undefined && indexMemberTime(page.next) < since) break;
      after = page.next;
    }
    return found;
  }
}
