import { createHash, randomUUID } from 'node:crypto';
import {
  createJobRequestSchema,
  fieldErrors,
  inputResponseRequestSchema,
  isTerminal,
  listJobsQuerySchema,
  Problem,
  retryAfterSeconds,
  isTaskId,
  taskNotFound,
  toHandle,
  toTaskStatus,
  type HandleFields,
  type JobCatalog,
  type TaskHandle,
  type TaskList,
  type TaskRecord,
  type TaskResult,
} from '@longrun/core';
import { CreateBatch, stableJson, type TaskQueue, type WebhookTargetPolicy } from '@longrun/engine';
import { InputValidator } from './input-validator.js';

export interface TaskServiceOptions {
  tasks: TaskQueue;
  catalog: JobCatalog;
  pollIntervalMs: number;
  defaultTtlMs: number;
  maxTtlMs: number;
  /** Deadline for each Redis operation; past it the request answers 503. */
  redisTimeoutMs: number;
  webhookPolicy: WebhookTargetPolicy;
  maxOpenTasks: number;
}

/** Most index entries one list request reads while filtering by status. */
const LIST_SCAN_LIMIT = 1000;

/**
 * What the API does with tasks, for one tenant at a time. Ownership is checked first on every
 * call that names a task; a foreign task is reported exactly like a missing one.
 */
export class TaskService {
  private readonly createSchema: ReturnType<typeof createJobRequestSchema>;
  private readonly inputs = new InputValidator();
  /** The creates of one event-loop turn go to Redis as one script call (decision 21). */
  private readonly creates: CreateBatch;

  constructor(private readonly opts: TaskServiceOptions) {
    this.createSchema = createJobRequestSchema(opts.maxTtlMs);
    this.creates = new CreateBatch(opts.tasks.store);
  }

  get retryAfter(): number {
    return retryAfterSeconds(this.opts.pollIntervalMs);
  }

  handle(record: HandleFields): TaskHandle {
    return toHandle(record, this.opts.pollIntervalMs);
  }

  /** Validates, stores and enqueues a task. `created` is false for an idempotent replay. */
  async submit(
    tenant: string,
    body: unknown,
    opts: { idempotencyKey?: string; requestId?: string } = {},
  ): Promise<{ handle: TaskHandle; created: boolean }> {
    const { idempotencyKey, requestId } = opts;
    const parsed = this.createSchema.safeParse(body);
    if (!parsed.success)
      throw invalid(400, 'The request body is invalid', fieldErrors(parsed.error));
    const { type, input, ttlMs, callback, priority } = parsed.data;
    const refused = callback ? this.opts.webhookPolicy.refuseUrl(callback.url) : null;
    if (refused) {
      throw invalid(400, 'The callback URL is not allowed', [
        { path: 'callback.url', message: `${refused} (see LONGRUN_WEBHOOK_ALLOW)` },
      ]);
    }
    const definition = this.opts.catalog.get(type);
    if (!definition) {
      throw invalid(400, `Unknown job type "${type}"`, [
        { path: 'type', message: `must be one of: ${[...this.opts.catalog.keys()].join(', ')}` },
      ]);
    }
    const checked = definition.input.safeParse(input);
    if (!checked.success) {
      throw invalid(
        422,
        `The input does not match job type "${type}"`,
        fieldErrors(checked.error, 'input'),
      );
    }

    const now = Date.now();
    const record: TaskRecord = {
      id: randomUUID(),
      tenant,
      type,
      status: toTaskStatus('waiting', { cancelRequested: false, awaitingInput: false }),
      statusMessage: 'queued',
      createdAt: now,
      updatedAt: now,
      ttlMs: ttlMs ?? this.opts.defaultTtlMs,
      input,
      cancelRequested: false,
      awaitingInput: false,
      inputs: [],
      ...(callback ? { callback } : {}),
    };
    // Only an idempotent submit needs the body's fingerprint.
    const bodyHash = idempotencyKey
      ? sha256(
          stableJson({
            type,
            input,
            ttlMs: ttlMs ?? null,
            callback: callback ?? null,
            priority: priority ?? null,
          }),
        )
      : '';
    const idempotency = idempotencyKey
      ? {
          key: this.store.keys.idempotency(tenant, sha256(idempotencyKey)),
          value: `${record.id} ${bodyHash}`,
        }
      : undefined;

    const enqueue = { priority, requestId };
    // Takes back whatever of the task landed, so no handle points at work that will never run. A
    // write that timed out may still land (commands on a connection run in order): the removal
    // is sent after it, and a worker that took the job in between is told to stop.
    const withdraw = () =>
      this.redis(() =>
        Promise.all([
          this.store.discard(record, idempotency),
          this.opts.tasks.removeJob(record.id, definition.name),
          this.opts.tasks.broadcastCancel(record.id),
        ]),
      ).catch(() => undefined);

    if (!idempotency && this.opts.maxOpenTasks === 0) {
      // Nothing can refuse this create (no idempotency key, no cap): the job follows the record
      // at once, without waiting for its answer, in the same write and round trip. Redis runs
      // them in that order.
      if (!this.opts.tasks.ready) await this.untilReady();
      const pending = this.creates.create({ record });
      await pending.written;
      const [stored, queued] = await Promise.allSettled([
        this.redis(() => pending.outcome),
        this.redis(() => this.opts.tasks.enqueue(record, definition, enqueue)),
      ]);
      if (stored.status === 'rejected' || queued.status === 'rejected') {
        await withdraw();
        throw stored.status === 'rejected'
          ? stored.reason
          : (queued as PromiseRejectedResult).reason;
      }
      return { handle: this.handle(record), created: true };
    }

    if (!this.opts.tasks.ready) await this.untilReady();
    const pending = this.creates.create({
      record,
      idempotency,
      maxOpenTasks: this.opts.maxOpenTasks,
    });
    const outcome = await this.redis(() => pending.outcome).catch(async (error: unknown) => {
      // A create that timed out may still run once Redis is free: remove it after it (it is on
      // the connection once `written`; commands on one connection run in order).
      await pending.written;
      await this.redis(() => this.store.discard(record, idempotency)).catch(() => undefined);
      throw error;
    });
    if ('full' in outcome) {
      throw new Problem({
        status: 429,
        title: 'Too many open tasks',
        detail: `This tenant has ${outcome.openTasks} unfinished tasks (the cap is ${this.opts.maxOpenTasks}); wait for some to finish`,
        code: 'too-many-open-tasks',
        retryAfter: this.retryAfter,
      });
    }
    if (!outcome.created) return this.replay(tenant, outcome.idempotencyValue, bodyHash);

    try {
      await this.redis(() => this.opts.tasks.enqueue(record, definition, enqueue));
    } catch (error) {
      await withdraw();
      throw error;
    }
    return { handle: this.handle(record), created: true };
  }

  /** What the handle of the task shows, if it exists and belongs to `tenant`; 404 otherwise. */
  async peek(tenant: string, id: string): Promise<HandleFields> {
    if (!isTaskId(id)) throw taskNotFound();
    const view = await this.redis(() => this.store.peek(id));
    if (!view || view.tenant !== tenant) throw taskNotFound();
    return view;
  }

  /**
   * Waits, within the deadline, for a connection being made (past it the submit answers 503 with
   * nothing sent). A create is queued for its turn's batch only on a ready connection, so that
   * whatever the submit sends after the create's `written` (its job, or the discard of a create
   * that timed out) reaches Redis after it.
   */
  private async untilReady(): Promise<void> {
    await this.redis(() => Promise.resolve());
  }

  /** The task, if it exists and belongs to `tenant`; 404 otherwise. */
  async owned(tenant: string, id: string): Promise<TaskRecord> {
    if (!isTaskId(id)) throw taskNotFound();
    const record = await this.redis(() => this.store.get(id));
    if (!record || record.tenant !== tenant) throw taskNotFound();
    return record;
  }

  /** `GET /v1/jobs/<id>/result`: the outcome, or 409 while the task is not terminal. */
  result(record: TaskRecord): TaskResult {
    if (!isTerminal(record.status)) {
      throw new Problem({
        status: 409,
        title: 'Task not finished',
        detail: `The task is ${record.status}; poll its handle and retry`,
        code: 'not-terminal',
        retryAfter: this.retryAfter,
        extra: { taskStatus: record.status },
      });
    }
    const handle = this.handle(record);
    const out: TaskResult = { taskId: record.id, status: record.status as TaskResult['status'] };
    if (record.status === 'completed') out.result = handle.result;
    else out.error = handle.error;
    return out;
  }

  /** Cancels a task that has not finished; aborts its handler wherever it runs. */
  async cancel(record: TaskRecord): Promise<TaskHandle> {
    if (isTerminal(record.status)) throw alreadyTerminal(record, 'cancelled');
    const now = Date.now();
    const update = {
      status: toTaskStatus('active', {
        cancelRequested: true,
        awaitingInput: record.awaitingInput,
      }),
      statusMessage: 'cancelled by request',
      cancelRequested: true,
      error: { message: 'The task was cancelled', code: 'cancelled' },
    };
    const outcome = await this.redis(() => this.store.transition(record.id, update));
    if (!outcome.ok) {
      if (outcome.reason === 'missing') throw taskNotFound();
      throw alreadyTerminal({ ...record, status: outcome.current }, 'cancelled');
    }
    await this.redis(async () => {
      await this.opts.tasks.removeJob(record.id, record.type);
      await this.opts.tasks.broadcastCancel(record.id);
    });
    return this.handle({ ...record, ...update, updatedAt: now });
  }

  /** Answers an `input_required` task and wakes its job. */
  async answer(record: TaskRecord, body: unknown): Promise<TaskHandle> {
    if (record.status !== 'input_required' || !record.inputRequest) {
      throw new Problem({
        status: 409,
        title: 'Task is not waiting for input',
        detail: `The task is ${record.status}`,
        code: 'not-awaiting-input',
        extra: { taskStatus: record.status },
      });
    }
    const parsed = inputResponseRequestSchema.safeParse(body);
    if (!parsed.success)
      throw invalid(400, 'The request body is invalid', fieldErrors(parsed.error));
    if (!('input' in parsed.data)) {
      throw invalid(400, 'The request body is invalid', [{ path: 'input', message: 'Required' }]);
    }
    const problems = this.inputs.validate(record.inputRequest.schema, parsed.data.input);
    if (problems.length > 0)
      throw invalid(422, 'The input does not match inputRequest.schema', problems);

    const now = Date.now();
    const update = {
      status: toTaskStatus('waiting', { cancelRequested: false, awaitingInput: false }),
      statusMessage: 'input received',
      awaitingInput: false,
      inputRequest: null,
    };
    const outcome = await this.redis(() =>
      this.store.transition(record.id, update, {
        requiredStatus: 'input_required',
        appendInput: parsed.data.input,
      }),
    );
    if (!outcome.ok) {
      if (outcome.reason === 'missing') throw taskNotFound();
      return this.answer({ ...record, status: outcome.current }, body);
    }
    const definition = this.opts.catalog.get(record.type);
    await this.redis(async () => {
      const woken = await this.opts.tasks.promote(record.id, record.type).catch(() => true);
      if (!woken && definition) {
        await this.opts.tasks.enqueue(record, definition, { readRecord: true });
      }
    });
    const { inputRequest: _answered, ...rest } = record;
    return this.handle({ ...rest, ...update, inputRequest: undefined, updatedAt: now });
  }

  /** Forgets a terminal task now. */
  async forget(record: TaskRecord): Promise<void> {
    if (!isTerminal(record.status)) {
      throw new Problem({
        status: 409,
        title: 'Task not finished',
        detail: `The task is ${record.status}; cancel it first or wait for it to finish`,
        code: 'not-terminal',
        extra: { taskStatus: record.status },
      });
    }
    const outcome = await this.redis(() => this.store.forget(record));
    if (!outcome.ok && outcome.reason === 'missing') throw taskNotFound();
  }

  /** The tenant's tasks, newest first, optionally of one status. */
  async list(tenant: string, query: unknown): Promise<TaskList> {
    const parsed = listJobsQuerySchema.safeParse(query);
    if (!parsed.success) throw invalid(400, 'The query is invalid', fieldErrors(parsed.error));
    const { status, limit, cursor } = parsed.data;
    let after = cursor === undefined ? undefined : decodeCursor(cursor);
    const tasks: TaskHandle[] = [];
    let scanned = 0;
    const batch = Math.min(Math.max(limit * 2, 50), 500);
    while (tasks.length < limit && scanned < LIST_SCAN_LIMIT) {
      const members = await this.redis(() => this.store.indexPage(tenant, after, batch));
      if (members.length === 0) return { tasks, nextCursor: null };
      const records = await this.redis(() => this.store.getMany(members.map(memberId)));
      const gone: string[] = [];
      for (const [i, record] of records.entries()) {
        const member = members[i] as string;
        scanned += 1;
        after = member;
        if (!record) gone.push(member);
        else if (status === undefined || record.status === status) tasks.push(this.handle(record));
        if (tasks.length === limit) break;
      }
      if (gone.length > 0) await this.redis(() => this.store.pruneIndex(tenant, gone));
      if (members.length < batch && tasks.length < limit) return { tasks, nextCursor: null };
    }
    return { tasks, nextCursor: after === undefined ? null : encodeCursor(after) };
  }

  private async replay(
    tenant: string,
    idempotencyValue: string,
    bodyHash: string,
  ): Promise<{ handle: TaskHandle; created: boolean }> {
    const [existingId = '', existingHash] = idempotencyValue.split(' ');
    if (existingHash !== bodyHash) {
      throw new Problem({
        status: 422,
        title: 'Idempotency-Key reused',
        detail: 'This Idempotency-Key was used with a different request body',
        code: 'idempotency-key-reused',
      });
    }
    const record = await this.owned(tenant, existingId).catch(() => {
      throw new Problem({
        status: 409,
        title: 'Idempotent request in flux',
        detail: 'The task for this Idempotency-Key is being created or removed; retry',
        code: 'idempotency-conflict',
        retryAfter: 1,
      });
    });
    const definition = this.opts.catalog.get(record.type);
    if (!isTerminal(record.status) && definition) {
      // Adding an existing job id is a no-op; this heals a first attempt that stored the task
      // but lost its connection before the job was added.
      await this.redis(() =>
        this.opts.tasks.enqueue(record, definition, { readRecord: record.inputs.length > 0 }),
      );
    }
    return { handle: this.handle(record), created: false };
  }

  private get store() {
    return this.opts.tasks.store;
  }

  private redis<T>(operation: () => Promise<T>): Promise<T> {
    return this.opts.tasks.run(operation, this.opts.redisTimeoutMs);
  }
}

function invalid(status: 400 | 422, detail: string, errors: { path: string; message: string }[]) {
  return new Problem({
    status,
    title: status === 400 ? 'Bad Request' : 'Unprocessable Content',
    detail,
    code: status === 400 ? 'invalid-request' : 'invalid-input',
    errors,
  });
}

function alreadyTerminal(record: TaskRecord, verb: string): Problem {
  return new Problem({
    status: 409,
    title: 'Task already finished',
    detail: `The task is ${record.status} and cannot be ${verb}`,
    code: 'terminal',
    extra: { taskStatus: record.status },
  });
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

const MEMBER = /^\d{13}:[0-9a-f-]{36}$/;

function memberId(member: string): string {
  return member.slice(14);
}

function encodeCursor(member: string): string {
  return Buffer.from(member).toString('base64url');
}

function decodeCursor(cursor: string): string {
  const member = Buffer.from(cursor, 'base64url').toString();
  if (!MEMBER.test(member)) {
    throw invalid(400, 'The query is invalid', [
      { path: 'cursor', message: 'must be a value returned as nextCursor' },
    ]);
  }
  return member;
}
