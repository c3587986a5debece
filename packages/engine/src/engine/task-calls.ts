import { randomUUID } from 'node:crypto';
import {
  fieldErrors,
  isTaskId,
  isTerminal,
  listJobsQuerySchema,
  toHandle,
  type HandleFields,
  type TaskHandle,
  type TaskResult,
} from '@longrun/core';
import { decodeCursor, encodeCursor } from './cursor.js';
import { mergedPage } from './merged-page.js';
import {
  conflict,
  invalid,
  notFound,
  type CancelOutcome,
  type ForgetOutcome,
  type GetOutcome,
  type ListOutcome,
  type NotFound,
  type ResultOutcome,
} from './outcomes.js';
import type { ShardSet } from './shard-set.js';

/** What the task calls need of the engine. */
export interface TaskCallDeps {
  shards: ShardSet;
  pollIntervalMs: number;
  redis<T>(operation: () => Promise<T>): Promise<T>;
  /** After a cancel: the task's children are cancelled, its parent told (issue 29). */
  cancelled?(tenant: string, view: HandleFields): Promise<void>;
}

/**
 * The engine's calls on tasks that exist (list, result, cancel, forget), each for one tenant:
 * another tenant's task is `notFound`, as a missing one is.
 */
export class TaskCalls {
  constructor(private readonly deps: TaskCallDeps) {}

  /** See `TaskEngine.get`: the handle (one `HMGET`), or with `input` the record's input too. */
  async get(tenant: string, id: string, opts: { input?: boolean } = {}): Promise<GetOutcome> {
    if (!opts.input) {
      const view = await this.owned(tenant, id);
      return 'kind' in view ? view : { kind: 'found', task: this.handle(view) };
    }
    if (!isTaskId(id)) return notFound;
    const record = await this.deps.redis(() => this.deps.shards.of(id).store.get(id));
    if (!record || record.tenant !== tenant) return notFound;
    return { kind: 'found', task: { ...this.handle(record), input: record.input } };
  }

  /** See `TaskEngine.list`. */
  async list(tenant: string, query: unknown): Promise<ListOutcome> {
    const parsed = listJobsQuerySchema.safeParse(query);
    if (!parsed.success) return invalid(400, 'The query is invalid', fieldErrors(parsed.error));
    const { status, type, scheduleId, tag, limit, cursor, view } = parsed.data;
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    if (after === null) {
      return invalid(400, 'The query is invalid', [
        { path: 'cursor', message: 'must be a value returned as nextCursor' },
      ]);
    }
    const wanted = { status, type, scheduleId, tag, limit, after, view };
    const page = await this.deps.redis(() =>
      mergedPage(this.deps.shards.configured, tenant, wanted),
    );
    return {
      kind: 'page',
      tasks: page.tasks.map((t) => (view === 'full' ? this.handle(t) : this.summary(t))),
      nextCursor: page.next === null ? null : encodeCursor(page.next),
    };
  }

  /** See `TaskEngine.result`. */
  async result(
    tenant: string,
    id: string,
    waitMs = 0,
    signal?: AbortSignal,
  ): Promise<ResultOutcome> {
    let view: HandleFields | null | NotFound = await this.owned(tenant, id);
    if ('kind' in view) return view;
    if (waitMs > 0) {
      view = await this.deps.shards
        .of(id)
        .watcher.untilTerminal(view, waitMs, signal ?? new AbortController().signal);
      if (!view) return notFound;
    }
    if (!isTerminal(view.status)) return conflict('notTerminal', view.status);
    const handle = this.handle(view);
    const result: TaskResult = { taskId: view.id, status: view.status as TaskResult['status'] };
    if (view.status === 'completed') result.result = handle.result;
    else result.error = handle.error;
    return { kind: 'finished', result };
  }

  /** See `TaskEngine.cancel`. */
  async cancel(tenant: string, id: string): Promise<CancelOutcome> {
    const view = await this.owned(tenant, id);
    if ('kind' in view) return view;
    if (isTerminal(view.status)) return conflict('terminal', view.status);
    const error = { message: 'The task was cancelled', code: 'cancelled' };
    const { store, jobs } = this.deps.shards.of(id);
    const done = await this.deps.redis(() =>
      store.transition(id, 'cancel', { cancelRequested: true, error }, { op: randomUUID() }),
    );
    if (!done.ok) return done.reason === 'missing' ? notFound : conflict('terminal', done.current);
    const stored = await this.deps.redis(async () => {
      await jobs.removeJob(id, view.type);
      await jobs.broadcastCancel(id);
      // The handle as the cancel wrote it (its time, the progress it kept), not one made up here.
      return store.peek(id);
    });
    // Read after the cancel's write: every child its parent recorded before it (issue 40).
    const after = stored ?? view;
    if (after.parentTaskId || after.childTaskIds?.length)
      await this.deps.cancelled?.(tenant, after);
    return {
      kind: 'cancelled',
      task: this.handle(stored ?? { ...view, status: 'cancelled', error }),
    };
  }

  /** See `TaskEngine.forget`. */
  async forget(tenant: string, id: string): Promise<ForgetOutcome> {
    const view = await this.owned(tenant, id);
    if ('kind' in view) return view;
    if (!isTerminal(view.status)) return conflict('notTerminal', view.status);
    const done = await this.deps.redis(() => this.deps.shards.of(id).store.forget(view));
    return !done.ok && done.reason === 'missing' ? notFound : { kind: 'forgotten' };
  }

  /** The public handle for what the store read. */
  handle(view: HandleFields): TaskHandle {
    return toHandle(view, this.deps.pollIntervalMs);
  }

  /** A list item: the handle without its result (the task's own `GET` has it). */
  summary(view: HandleFields): TaskHandle {
    const { result: _result, ...summary } = this.handle(view);
    return summary;
  }

  /** What the handle shows, if the task exists and belongs to `tenant`. */
  async owned(tenant: string, id: string): Promise<HandleFields | NotFound> {
    if (!isTaskId(id)) return notFound;
    const view = await this.deps.redis(() => this.deps.shards.of(id).store.peek(id));
    return view && view.tenant === tenant ? view : notFound;
  }
}
