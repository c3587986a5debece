import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  DEFAULT_MAX_SCHEDULES,
  DEFAULT_MIN_SCHEDULE_EVERY_MS,
  inputResponseRequestSchema,
  isTerminal,
  isA2APush,
  isTaskId,
  fieldErrors,
  listJobsQuerySchema,
  retryAfterSeconds,
  toHandle,
  type HandleFields,
  type TaskHandle,
  type TaskResult,
} from '@longrun/core';
import type { JobTypeDirectory } from '../registry/job-type-directory.js';
import type { RegisteredJobType } from '../registry/job-type-registry.js';
import { indexMember } from '../keys.js';
import { MAX_SHARDS, shardOfTaskId } from '../shards.js';
import { ShardCount } from '../shard-count.js';
import type { TaskLog } from '../task-log.js';
import type { TaskQueue } from '../task-queue.js';
import type { TaskStore } from '../task-store.js';
import type { TaskEvents } from '../task-events.js';
import type { PushOutcome } from '../task-messages.js';
import type { TaskWorkerLogger } from '../worker/job-data.js';
import type { WebhookTargetPolicy } from '../webhook-target.js';
import type { ListQuery } from '../task-index.js';
import { InputValidator } from './answer-validator.js';
import { submitBatch, type BatchOutcome } from './batch.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import {
  conflict,
  invalid,
  notFound,
  type AnswerOutcome,
  type CancelOutcome,
  type DeletePushConfigOutcome,
  type ForgetOutcome,
  type GetOutcome,
  type ListOutcome,
  type NotFound,
  type PushConfigOutcome,
  type ResultOutcome,
  type SetPushConfigOutcome,
  type SubmitOutcome,
  type TickOutcome,
  type CreateScheduleOutcome,
  type DeleteScheduleOutcome,
  type GetScheduleOutcome,
  type ScheduleListOutcome,
} from './outcomes.js';
import { pushTarget } from './push-config.js';
import { Schedules } from './schedules.js';
import { Shard } from './shard.js';
import type { FairShareOptions, SubmitOptions, TickOptions } from './submit.js';
import type { OpenWatch } from './watch.js';

export interface TaskEngineOptions {
  /** A producer connection (`createRedis(url, 'producer')`); the engine never closes it. */
  connection: Redis;
  /** Wake-ups for watches, on a subscriber connection of its own. */
  events: TaskEvents;
  prefix: string;
  /**
   * Shards the tasks are spread over (`LONGRUN_SHARDS`, default 1; decision 37): each its own
   * hash tag, so a Redis Cluster's primaries share the work. A task id names its shard, so a task
   * stays readable when the count changes.
   */
  shards?: number | undefined;
  /**
   * The job types tasks may have (their input schemas, queues and attempts), as workers
   * registered them. The caller starts and closes it.
   */
  types: JobTypeDirectory;
  webhookPolicy: WebhookTargetPolicy;
  pollIntervalMs: number;
  defaultTtlMs: number;
  maxTtlMs: number;
  /** Deadline for each Redis step of a call; past it the call throws `StoreUnavailableError`. */
  redisTimeoutMs: number;
  /** Non-terminal tasks per tenant; 0 = no cap. */
  maxOpenTasks: number;
  /**
   * Bytes one tenant's tasks may keep in Redis (records with inputs, results and answers),
   * counted when written, given back on expiry or delete; 0 (default here) = no budget. The API
   * sets it from `LONGRUN_TENANT_MAX_BYTES`, by default a quarter of Redis's `maxmemory`
   * (`tenantBudgetFor`), and may change it later (`setTenantMaxBytes`).
   */
  tenantMaxBytes?: number | undefined;
  /**
   * Fair share of the workers between tenants (decision 33): each task's BullMQ priority is its
   * tenant's virtual start time, so tenants take turns at the head of a queue. `false` queues in
   * arrival order (default: on, every tenant weight 1).
   */
  fairShare?: FairShareOptions | false | undefined;
  logger?: TaskWorkerLogger | undefined;
  /** How often a watch re-checks without a wake-up (default 15 s). */
  heartbeatMs?: number | undefined;
  /** Test hook, see `SubmitDeps.crashAt`. */
  crashAt?: string | undefined;
  /** Schedules one tenant may have (default 100, `LONGRUN_MAX_SCHEDULES`). */
  maxSchedules?: number | undefined;
  /**
   * The shortest `everyMs` of a schedule, and the closest two runs of its cron may be (default
   * 1000, `LONGRUN_SCHEDULE_MIN_EVERY_MS`).
   */
  scheduleMinEveryMs?: number | undefined;
}

/**
 * The one task API every door calls (HTTP today; MCP and A2A next): submit, get, list, cancel,
 * answer, forget, result and watch, for one tenant at a time. Each call answers a discriminated
 * outcome; only an unreachable Redis is thrown. A task of another tenant is `notFound`, exactly
 * like a missing one. No door touches Redis keys or BullMQ: the engine orders every write.
 */
export class TaskEngine {
  /** The shards new tasks go to (`shards[0]` is the configured prefix itself). */
  readonly shards: readonly Shard[];
  readonly events: TaskEvents;
  /** Each task's side channel for the protocol doors (MCP's task message queue). */
  readonly messages: EngineMessages;
  private readonly answers: InputValidator;
  private readonly schedules: Schedules;
  /** Shards past the configured count that task ids still name (the count was lowered). */
  private readonly retired = new Map<number, Shard>();
  private readonly shardDeps: ConstructorParameters<typeof Shard>[1];
  /** Each tenant's usage on every shard, as last read (see `usageElsewhere`). */
  private readonly usage = new Map<string, TenantUsage>();
  /** Where the next task without an idempotency key goes (round robin from a random start). */
  private nextShard: number;
  /** `<prefix>:shards`: the highest shard count announced (decision 37). */
  private readonly shardCount: ShardCount;
  /** That count as last read or announced here (at least the configured one). */
  private announced: number;

  /** See `TaskEngineOptions.tenantMaxBytes` (0: no budget). */
  get tenantMaxBytes(): number {
    return this.budgetBytes;
  }

  /**
   * Changes the storage budget for the submits that follow (the API's default follows Redis's
   * `maxmemory`, read again while it runs: `tenantBudgetFor`). 0 turns it off.
   */
  setTenantMaxBytes(bytes: number): void {
    if (!Number.isInteger(bytes) || bytes < 0)
      throw new RangeError('bytes must be an integer >= 0');
    this.budgetBytes = bytes;
  }

  private budgetBytes: number;

  constructor(private readonly opts: TaskEngineOptions) {
    this.budgetBytes = opts.tenantMaxBytes ?? 0;
    const count = opts.shards ?? 1;
    if (!Number.isInteger(count) || count < 1 || count > MAX_SHARDS) {
      throw new RangeError(`shards must be an integer from 1 to ${MAX_SHARDS}`);
    }
    this.events = opts.events;
    this.answers = new InputValidator(opts.logger);
    const redis = <T>(operation: () => Promise<T>) => this.redis(operation);
    this.shardDeps = { ...opts, redis, heartbeatMs: opts.heartbeatMs ?? 15_000 };
    this.shards = Array.from({ length: count }, (_, i) => new Shard(i, this.shardDeps));
    this.nextShard = Math.floor(Math.random() * count);
    this.shardCount = new ShardCount(opts.connection, opts.prefix);
    this.announced = count;
    this.messages = new EngineMessages((id) => this.shardOf(id));
    this.schedules = new Schedules({
      connection: opts.connection,
      prefix: opts.prefix,
      types: opts.types,
      maxTtlMs: opts.maxTtlMs,
      minEveryMs: this.scheduleMinEveryMs,
      maxPerTenant: opts.maxSchedules ?? DEFAULT_MAX_SCHEDULES,
      redis,
      submit: (tenant, body, submitOpts) => this.submitTick(tenant, body, submitOpts),
      logger: opts.logger,
    });
  }

  /**
   * Tells the workers, through Redis, how many shards tasks go to (`ShardCount`): a worker not
   * told otherwise serves every shard announced. Call once at start.
   */
  async announceShards(): Promise<number> {
    const highest = await this.redis(() => this.shardCount.announce(this.shards.length));
    this.announced = Math.max(this.announced, highest);
    return highest;
  }

  /**
   * Every shard tasks may be on: the configured ones and, past them, those an API process once
   * placed tasks on (the highest count announced, read now): what metrics count, so the queues
   * of a lowered count show until they are drained.
   */
  async knownShards(): Promise<readonly Shard[]> {
    const highest = await this.shardCount.read();
    this.announced = Math.max(this.announced, highest);
    const known = [...this.shards];
    for (let i = this.shards.length; i < this.announced; i++) known.push(this.shardOf(i));
    return known;
  }

  /** Shard 0's records (the configured prefix): what single-shard callers and tests read. */
  get store(): TaskStore {
    return (this.shards[0] as Shard).store;
  }

  /** Shard 0's task log. */
  get log(): TaskLog {
    return (this.shards[0] as Shard).log;
  }

  /** Shard 0's queues, on the configured prefix (health checks and the rate limiter use its connection). */
  get jobs(): TaskQueue {
    return (this.shards[0] as Shard).jobs;
  }

  /**
   * The shard a task id (or a shard number) names: a configured one, or one the count no longer
   * includes. An id naming a shard no API ever announced (made up: no such task) reads shard 0,
   * where it is missing like any unknown id, so no shard is made for it.
   */
  shardOf(id: string | number): Shard {
    const number = typeof id === 'number' ? id : shardOfTaskId(id);
    const configured = this.shards[number];
    if (configured) return configured;
    if (number >= this.announced) return this.shards[0] as Shard;
    let retired = this.retired.get(number);
    if (!retired) {
      retired = new Shard(number, this.shardDeps);
      this.retired.set(number, retired);
    }
    return retired;
  }

  /** How often clients should poll a handle (it says so in `pollIntervalMs`). */
  get pollIntervalMs(): number {
    return this.opts.pollIntervalMs;
  }

  /** Seconds a client should wait before polling again (`Retry-After`). */
  get retryAfter(): number {
    return retryAfterSeconds(this.opts.pollIntervalMs);
  }

  /** Every registered job type, read afresh: versions, input schemas, queues, live workers. */
  jobTypes(): Promise<RegisteredJobType[]> {
    return this.redis(() => this.opts.types.list());
  }

  /** The job types as last read (for documents built per request, e.g. OpenAPI). */
  get knownJobTypes(): RegisteredJobType[] {
    return [...this.opts.types.values()];
  }

  /**
   * Validates, stores and enqueues a task (see `SubmitOutcome` for what can stop it). The task
   * goes to the next shard in turn; with an idempotency key, to the shard the key names, so a
   * replay finds its task. A shard where the tenant is at its share of a cap passes the task on
   * to the next, so the cap is the whole of the shards' shares.
   */
  async submit(tenant: string, body: unknown, opts: SubmitOptions = {}): Promise<SubmitOutcome> {
    const outcome = await this.place(tenant, body, opts);
    // Only a tick's create checks a schedule, and no schedule is named here.
    if (outcome.kind === 'scheduleGone')
      throw new Error('a submit without a schedule found it gone');
    return outcome;
  }

  /**
   * A schedule's tick: submits its task as `submit` does, but only while the schedule exists,
   * checked in the create's own script, so that no tick makes a task once `deleteSchedule` has
   * answered (`scheduleGone`). Ticks go to shard 0, beside the schedules (one slot on a cluster).
   */
  submitTick(tenant: string, body: unknown, opts: TickOptions): Promise<TickOutcome> {
    return this.place(tenant, body, opts);
  }

  private async place(
    tenant: string,
    body: unknown,
    opts: SubmitOptions & { scheduleId?: string },
  ): Promise<TickOutcome> {
    const count = this.shards.length;
    if (count === 1) {
      // The budget as it is now (it may change while the API runs: setTenantMaxBytes).
      const caps = opts?.caps ?? {
        maxOpenTasks: this.opts.maxOpenTasks,
        maxBytes: this.budgetBytes,
      };
      return (this.shards[0] as Shard).submitter.submit(tenant, body, { ...opts, caps });
    }
    let shard: Shard;
    if (this.pinned(body) || opts.scheduleId !== undefined) shard = this.shards[0] as Shard;
    else if (opts.idempotencyKey !== undefined) {
      shard = this.shards[keyShard(tenant, opts.idempotencyKey, count)] as Shard;
    } else {
      shard = this.shards[this.nextShard] as Shard;
      this.nextShard = (this.nextShard + 1) % count;
    }
    const wholeOpen = this.opts.maxOpenTasks;
    const wholeBytes = this.tenantMaxBytes;
    if (wholeOpen === 0 && wholeBytes === 0) return shard.submitter.submit(tenant, body, opts);
    // The tenant's caps hold over all shards: this shard's create may use what the others leave.
    const others = await this.usageElsewhere(tenant, shard);
    const leftOpen = wholeOpen - others.open;
    const leftBytes = wholeBytes - others.bytes;
    if (wholeOpen > 0 && leftOpen <= 0) {
      return { kind: 'full', openTasks: others.open, cap: wholeOpen };
    }
    if (wholeBytes > 0 && leftBytes <= 0) {
      return {
        kind: 'overBudget',
        usedBytes: others.bytes,
        maxBytes: wholeBytes,
        retryAfterMs: 1000,
      };
    }
    const caps = {
      maxOpenTasks: wholeOpen === 0 ? 0 : leftOpen,
      maxBytes: wholeBytes === 0 ? 0 : leftBytes,
    };
    const outcome = await shard.submitter.submit(tenant, body, { ...opts, caps });
    if (outcome.kind === 'created') this.usage.get(tenant)?.counted(shard.number);
    if (outcome.kind === 'full') {
      return { ...outcome, openTasks: outcome.openTasks + others.open, cap: wholeOpen };
    }
    if (outcome.kind === 'overBudget') {
      return { ...outcome, usedBytes: outcome.usedBytes + others.bytes, maxBytes: wholeBytes };
    }
    return outcome;
  }

  /**
   * What the tenant holds on the shards other than `shard` (open tasks, stored bytes). Far from
   * its open-task cap and its storage budget (under half of each, as last read) a read up to a
   * second old will do, counted up as this process creates tasks meanwhile; nearer, every submit
   * reads every shard (one pipelined read each), so a cap holds exactly where it bites, and a
   * tenant far from it costs one read per other shard a second, not per submit. (The budget is
   * on by default, so reading at every submit for it alone would tax every sharded deployment;
   * far from it, a tenant may pass it by what it stores on other shards within that second.)
   */
  private async usageElsewhere(
    tenant: string,
    shard: Shard,
  ): Promise<{ open: number; bytes: number }> {
    let usage = this.usage.get(tenant);
    const fresh = usage && Date.now() - usage.readAt <= USAGE_FRESH_MS;
    // Near a cap, stored bytes grow with results written elsewhere, unseen here: read every time.
    const exact = usage?.near(this.opts.maxOpenTasks, this.tenantMaxBytes) === true;
    if (!usage || !fresh || exact) {
      const read = await this.redis(() =>
        Promise.all(this.shards.map((s) => s.store.tenantUsage(tenant))),
      );
      usage = new TenantUsage(read);
      if (this.usage.size >= 10_000) this.usage.clear();
      this.usage.set(tenant, usage);
    }
    return usage.except(shard.number);
  }

  /** Submits up to 100 tasks, each on its own (see `submitBatch`); their outcomes in order. */
  submitBatch(tenant: string, body: unknown, opts?: { requestId?: string }): Promise<BatchOutcome> {
    return submitBatch(this, tenant, body, opts);
  }

  /** The task's handle: one `HMGET` of what a handle shows, never the input or answers. */
  async get(tenant: string, id: string): Promise<GetOutcome> {
    const view = await this.owned(tenant, id);
    return 'kind' in view ? view : { kind: 'found', task: this.handle(view) };
  }

  /** The tenant's tasks, newest first, as summaries (no result) unless `view=full`. */
  async list(tenant: string, query: unknown): Promise<ListOutcome> {
    const parsed = listJobsQuerySchema.safeParse(query);
    if (!parsed.success) return invalid(400, 'The query is invalid', fieldErrors(parsed.error));
    const { status, type, scheduleId, limit, cursor, view } = parsed.data;
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    if (after === null) {
      return invalid(400, 'The query is invalid', [
        { path: 'cursor', message: 'must be a value returned as nextCursor' },
      ]);
    }
    const wanted = { status, type, scheduleId, limit, after, view };
    const page = await this.redis(() => mergedPage(this.shards, tenant, wanted));
    return {
      kind: 'page',
      tasks: page.tasks.map((t) => (view === 'full' ? this.handle(t) : this.summary(t))),
      nextCursor: page.next === null ? null : encodeCursor(page.next),
    };
  }

  /** The outcome of a finished task, waiting up to `waitMs` for it to finish. */
  async result(
    tenant: string,
    id: string,
    waitMs = 0,
    signal?: AbortSignal,
  ): Promise<ResultOutcome> {
    let view: HandleFields | null | NotFound = await this.owned(tenant, id);
    if ('kind' in view) return view;
    if (waitMs > 0) {
      view = await this.shardOf(id).watcher.untilTerminal(
        view,
        waitMs,
        signal ?? new AbortController().signal,
      );
      if (!view) return notFound;
    }
    if (!isTerminal(view.status)) return conflict('notTerminal', view.status);
    const handle = this.handle(view);
    const result: TaskResult = { taskId: view.id, status: view.status as TaskResult['status'] };
    if (view.status === 'completed') result.result = handle.result;
    else result.error = handle.error;
    return { kind: 'finished', result };
  }

  /** Cancels a task that has not finished; aborts its handler wherever it runs. */
  async cancel(tenant: string, id: string): Promise<CancelOutcome> {
    const view = await this.owned(tenant, id);
    if ('kind' in view) return view;
    if (isTerminal(view.status)) return conflict('terminal', view.status);
    const error = { message: 'The task was cancelled', code: 'cancelled' };
    const { store, jobs } = this.shardOf(id);
    const done = await this.redis(() =>
      store.transition(id, 'cancel', { cancelRequested: true, error }),
    );
    if (!done.ok) return done.reason === 'missing' ? notFound : conflict('terminal', done.current);
    const stored = await this.redis(async () => {
      await jobs.removeJob(id, view.type);
      await jobs.broadcastCancel(id);
      // The handle as the cancel wrote it (its time, the progress it kept), not one made up here.
      return store.peek(id);
    });
    return {
      kind: 'cancelled',
      task: this.handle(stored ?? { ...view, status: 'cancelled', error }),
    };
  }

  /**
   * Answers an `input_required` task and wakes its job. The answer is recorded only if the task
   * still asks the question it was checked against: one asked since (another replica took an
   * answer to the first, and the handler asked again) is `questionChanged`, and waits on.
   */
  async answer(tenant: string, id: string, body: unknown): Promise<AnswerOutcome> {
    if (!isTaskId(id)) return notFound;
    const read = await this.redis(() => this.shardOf(id).store.peekAt(id));
    if (!read || read.view.tenant !== tenant) return notFound;
    const { view, seq } = read;
    if (view.status !== 'input_required' || !view.inputRequest) {
      return conflict('notAwaitingInput', view.status);
    }
    const parsed = inputResponseRequestSchema.safeParse(body);
    if (!parsed.success)
      return invalid(400, 'The request body is invalid', fieldErrors(parsed.error));
    if (!('input' in parsed.data)) {
      return invalid(400, 'The request body is invalid', [{ path: 'input', message: 'Required' }]);
    }
    const problems = this.answers.validate(view.inputRequest.schema, parsed.data.input);
    if (problems.length > 0)
      return invalid(422, 'The input does not match inputRequest.schema', problems);
    const done = await this.redis(() =>
      this.shardOf(id).store.transition(
        id,
        'answer',
        { awaitingInput: false, inputRequest: null },
        { appendInput: parsed.data.input, ifSeq: seq },
      ),
    );
    if (!done.ok) {
      if (done.reason === 'missing') return notFound;
      return conflict(
        done.reason === 'changed' ? 'questionChanged' : 'notAwaitingInput',
        done.current,
      );
    }
    const wake = await this.wake(view);
    const { inputRequest: _answered, ...rest } = view;
    const answered = { ...rest, status: 'working' as const, statusMessage: 'input received' };
    return { kind: 'answered', task: this.handle({ ...answered, updatedAt: Date.now() }), wake };
  }

  /** Forgets a terminal task now. */
  async forget(tenant: string, id: string): Promise<ForgetOutcome> {
    const view = await this.owned(tenant, id);
    if ('kind' in view) return view;
    if (!isTerminal(view.status)) return conflict('notTerminal', view.status);
    const done = await this.redis(() => this.shardOf(id).store.forget(view));
    return !done.ok && done.reason === 'missing' ? notFound : { kind: 'forgotten' };
  }

  /**
   * The task's A2A push notification config (`null`: none; a longrun webhook is not one).
   * Another tenant's task is `notFound`.
   */
  async pushConfig(tenant: string, id: string): Promise<PushConfigOutcome> {
    if (!isTaskId(id)) return notFound;
    const stored = await this.redis(() => this.shardOf(id).store.callback(id));
    if (!stored || stored.tenant !== tenant) return notFound;
    const target = stored.callback && isA2APush(stored.callback) ? stored.callback : null;
    return { kind: 'found', config: target };
  }

  /**
   * Gives the task an A2A push notification config (`a2aPushConfigSchema`; its id defaults to the
   * task's): each status change from now on is POSTed there as the A2A task, by the same outbox
   * and delivery workers as a `callback`. A task keeps one: a config of the same id replaces it,
   * another is `pushTaken`, and a task with a longrun `callback` is `hasCallback`. The URL is
   * checked as a `callback` URL is. A finished task takes one too (nothing more is sent).
   */
  async setPushConfig(tenant: string, id: string, body: unknown): Promise<SetPushConfigOutcome> {
    if (!isTaskId(id)) return notFound;
    const target = pushTarget(body, id, this.opts.webhookPolicy, '');
    if ('kind' in target) return target;
    const done = await this.redis(() =>
      this.shardOf(id).store.setPush(tenant, id, { set: target }),
    );
    if (done === 'ok') return { kind: 'set', config: target };
    if (done === 'missing' || done === 'absent') return notFound;
    if (done === 'callback') return { kind: 'hasCallback' };
    return { kind: 'pushTaken', configId: done.taken };
  }

  /**
   * Removes the task's A2A push notification config `configId`: no status change after it is
   * POSTed there, and deliveries still queued for it are dropped. `absent` when the task has no
   * such config (removing one twice is not an error).
   */
  async deletePushConfig(
    tenant: string,
    id: string,
    configId: string,
  ): Promise<DeletePushConfigOutcome> {
    if (!isTaskId(id)) return notFound;
    const done = await this.redis(() =>
      this.shardOf(id).store.setPush(tenant, id, { remove: configId }),
    );
    if (done === 'missing') return notFound;
    return { kind: done === 'ok' ? 'deleted' : 'absent' };
  }

  /** Opens a watch on the task's changes (SSE), after event `after` when resuming. */
  async watch(tenant: string, id: string, after?: string): Promise<OpenWatch | NotFound> {
    if (!isTaskId(id)) return notFound;
    return this.shardOf(id).watcher.open(tenant, id, after);
  }

  /** The public handle for what the store read. */
  handle(view: HandleFields): TaskHandle {
    return toHandle(view, this.opts.pollIntervalMs);
  }

  /** A list item: the handle without its result (the task's own `GET` has it). */
  summary(view: HandleFields): TaskHandle {
    const { result: _result, ...summary } = this.handle(view);
    return summary;
  }

  /** Runs one Redis step within the call's deadline, Redis failures turned into store errors. */
  redis<T>(operation: () => Promise<T>): Promise<T> {
    return this.jobs.run(operation, this.opts.redisTimeoutMs);
  }

  /** See `TaskEngineOptions.scheduleMinEveryMs`. */
  get scheduleMinEveryMs(): number {
    return this.opts.scheduleMinEveryMs ?? DEFAULT_MIN_SCHEDULE_EVERY_MS;
  }

  /**
   * Creates a recurring task: each tick of its `cron` or `everyMs` submits `{type, input, ttlMs?,
   * timeoutMs?}` for the tenant, as `submit` would, the task carrying the schedule's id. With an
   * `idempotencyKey`, a retry of the same create gets the same schedule back (`replayed`).
   */
  createSchedule(
    tenant: string,
    body: unknown,
    opts: { idempotencyKey?: string | undefined } = {},
  ): Promise<CreateScheduleOutcome> {
    return this.schedules.create(tenant, body, opts);
  }

  /** The tenant's schedules, newest first, each with when it runs next. */
  listSchedules(tenant: string): Promise<ScheduleListOutcome> {
    return this.schedules.list(tenant);
  }

  /** One schedule of the tenant (another tenant's is `notFound`). */
  getSchedule(tenant: string, id: string): Promise<GetScheduleOutcome> {
    return this.schedules.get(tenant, id);
  }

  /** Deletes a schedule: no tick after it makes a task. Its tasks stay. */
  deleteSchedule(tenant: string, id: string): Promise<DeleteScheduleOutcome> {
    return this.schedules.delete(tenant, id);
  }

  /**
   * Starts turning schedule ticks into tasks in this process, on `connection`, a worker-role
   * connection (`createRedis(url, 'worker')`) the caller closes after `close()`. API processes
   * run one each; BullMQ gives each tick to one of them.
   */
  startScheduleTicker(connection: Redis): Promise<void> {
    return this.schedules.startTicker(connection);
  }

  async close(): Promise<void> {
    await this.schedules.close();
    await Promise.all([...this.shards, ...this.retired.values()].map((s) => s.jobs.close()));
  }

  /**
   * A type whose runs are limited fleet-wide (a rate limit, or a `LONGRUN_TYPE_CONCURRENCY` cap)
   * runs on shard 0 only: BullMQ holds such limits per queue, and one queue holds them exactly.
   */
  private pinned(body: unknown): boolean {
    const type = (body as { type?: unknown } | null)?.type;
    if (typeof type !== 'string') return false;
    const definition = this.opts.types.get(type);
    return definition !== undefined && (!!definition.rateLimit || !!definition.fleetConcurrency);
  }

  /** What the handle shows, if the task exists and belongs to `tenant`. */
  private async owned(tenant: string, id: string): Promise<HandleFields | NotFound> {
    if (!isTaskId(id)) return notFound;
    const view = await this.redis(() => this.shardOf(id).store.peek(id));
    return view && view.tenant === tenant ? view : notFound;
  }

  /** Wakes an answered task's job; a failed wake-up is left to the reconciler, and said so. */
  private async wake(view: HandleFields): Promise<'woken' | 'requeued' | 'deferred'> {
    const definition = this.opts.types.get(view.type);
    if (!definition) return 'deferred';
    try {
      const { store, jobs } = this.shardOf(view.id);
      const priority = await this.redis(() => store.priority(view.id));
      return await this.redis(() => jobs.wake({ ...view, priority }, definition));
    } catch (err) {
      this.opts.logger?.warn({ err, taskId: view.id }, 'answer recorded; waking its job failed');
      return 'deferred';
    }
  }
}
export type { FairShareOptions } from './submit.js';

/** How long a tenant's usage on the other shards is trusted before it is read again. */
const USAGE_FRESH_MS = 1000;

/** A tenant's open tasks and stored bytes on each shard, as read at `readAt`. */
class TenantUsage {
  readonly readAt = Date.now();

  constructor(private readonly perShard: { open: number; bytes: number }[]) {}

  /** A task this process created on `shard` since the read. */
  counted(shard: number): void {
    const entry = this.perShard[shard];
    if (entry) entry.open += 1;
  }

  /** At half of the open-task cap or of the storage budget, or past it (0: none). */
  near(maxOpen: number, maxBytes: number): boolean {
    const { open, bytes } = this.except(-1);
    return (maxOpen > 0 && open * 2 >= maxOpen) || (maxBytes > 0 && bytes * 2 >= maxBytes);
  }

  /** The sum over every shard but `shard`. */
  except(shard: number): { open: number; bytes: number } {
    let open = 0;
    let bytes = 0;
    for (const [i, u] of this.perShard.entries()) {
      if (i === shard) continue;
      open += u.open;
      bytes += u.bytes;
    }
    return { open, bytes };
  }
}

/** The shard an idempotency key places its task on: fixed for a tenant, key and shard count. */
function keyShard(tenant: string, key: string, count: number): number {
  const digest = createHash('sha256').update(tenant).update('\n').update(key).digest();
  return digest.readUInt32BE(0) % count;
}

/**
 * One page of a tenant's tasks across shards, newest first. Each shard's index orders its tasks
 * by `<inverted time>:<id>`, one order for all shards, so a page is the shards' pages merged and
 * the cursor (the last member given) means the same on every shard. A shard that stopped early
 * (its scan budget spent while filtering) bounds the page: nothing past its place is given, so
 * the next page misses none of its tasks.
 */
async function mergedPage(
  shards: readonly Shard[],
  tenant: string,
  query: ListQuery,
): Promise<{ tasks: HandleFields[]; next: string | null }> {
  if (shards.length === 1) return (shards[0] as Shard).index.page(tenant, query);
  const pages = await Promise.all(shards.map((s) => s.index.page(tenant, query)));
  const entries = pages
    .flatMap((p) => p.tasks)
    .map((task) => ({ task, member: indexMember(task.createdAt, task.id) }))
    .sort((a, b) => (a.member < b.member ? -1 : a.member > b.member ? 1 : 0));
  // The earliest place a shard stopped before its end: the page may not go past it.
  let bound: string | null = null;
  for (const p of pages) {
    if (p.next !== null && (bound === null || p.next < bound)) bound = p.next;
  }
  const given = entries.filter((e) => bound === null || e.member <= bound).slice(0, query.limit);
  const last = given.at(-1);
  const full = given.length === query.limit && last !== undefined;
  const next = full ? last.member : bound;
  return { tasks: given.map((e) => e.task), next };
}

/**
 * The doors' side channels (`TaskMessages`), each call on the shard its task id names.
 */
export class EngineMessages {
  constructor(private readonly shardOf: (id: string) => Shard) {}

  push(tenant: string, id: string, message: string, max?: number): Promise<PushOutcome> {
    return this.shardOf(id).messages.push(tenant, id, message, max);
  }

  shift(tenant: string, id: string): Promise<string | null> {
    return this.shardOf(id).messages.shift(tenant, id);
  }

  drain(tenant: string, id: string): Promise<string[]> {
    return this.shardOf(id).messages.drain(tenant, id);
  }

  subscribe(id: string, listener: () => void): () => void {
    return this.shardOf(id).messages.subscribe(id, listener);
  }
}
