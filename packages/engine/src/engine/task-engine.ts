import { DEFAULT_MIN_SCHEDULE_EVERY_MS, isTaskId, retryAfterSeconds } from '@longrun/core';
import type { Redis } from 'ioredis';
import type { RegisteredJobType } from '../registry/job-type-registry.js';
import type { TaskEvents } from '../task-events.js';
import type { TenantLimiter } from '../tenant-limiter.js';
import type { Answers } from './answers.js';
import type { DurableTasks } from './durable.js';
import { stepPage, type StepsOutcome } from './step-page.js';
import { submitBatch, type BatchOutcome } from './batch.js';
import type { EngineMessages } from './engine-messages.js';
import * as operations from './operations.js';
import type { AdminQueue, EngineHealth, QueueDepth } from './operations.js';
import {
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
import { registerParts } from './parts.js';
import type { Placement } from './placement.js';
import type { PushConfigs } from './push-configs.js';
import type { Replays, ReplayBatchOutcome } from './replay.js';
import type { Schedules } from './schedules.js';
import type { ShardSet } from './shard-set.js';
import type { TaskCalls } from './task-calls.js';
import type { SubmitOptions, TickOptions } from './submit.js';
import type { TaskEngineOptions } from './task-engine-options.js';
import { wireEngine } from './wiring.js';
import type { OpenWatch } from './watch.js';

export type { TaskEngineOptions } from './task-engine-options.js';
export type { FairShareOptions } from './submit.js';

/**
 * The one task API every door calls (HTTP, MCP and A2A): submit, get, list, cancel, answer,
 * forget, result and watch, for one tenant at a time, and what an operator's tools ask (health,
 * queue depth, the admin page's queues, a rate limiter). Each task call answers a discriminated
 * outcome; only an unreachable Redis is thrown. A task of another tenant is `notFound`, exactly
 * like a missing one. No door touches Redis keys or BullMQ: the engine orders every write, and
 * its stores and queues stay inside (tests reach them through `@longrun/engine/internal`).
 */
export class TaskEngine {
  readonly events: TaskEvents;
  /** Each task's side channel for the protocol doors (MCP's task message queue). */
  readonly messages: EngineMessages;
  /** Durable tasks (issue 29): waitpoints, and a worker's child tasks (`DurableHost`). */
  readonly durable: DurableTasks;
  /** The shards tasks are spread over (decision 37). */
  private readonly shards: ShardSet;
  private readonly placement: Placement;
  private readonly calls: TaskCalls;
  private readonly answers: Answers;
  private readonly pushConfigs: PushConfigs;
  private readonly schedules: Schedules;
  private readonly replays: Replays;
  private budgetBytes: number;

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

  constructor(private readonly opts: TaskEngineOptions) {
    this.budgetBytes = opts.tenantMaxBytes ?? 0;
    this.events = opts.events;
    const parts = wireEngine(opts, {
      redis: (operation) => this.redis(operation),
      budgetBytes: () => this.budgetBytes,
      submit: (tenant, body, o) => this.submit(tenant, body, o),
      submitTick: (tenant, body, o) => this.submitTick(tenant, body, o),
      minScheduleEveryMs: this.scheduleMinEveryMs,
    });
    ({ shards: this.shards, placement: this.placement, calls: this.calls } = parts);
    ({ answers: this.answers, pushConfigs: this.pushConfigs, replays: this.replays } = parts);
    ({ schedules: this.schedules, messages: this.messages, durable: this.durable } = parts);
    registerParts(this, this.shards);
  }

  /**
   * Tells the workers, through Redis, how many shards tasks go to (`ShardCount`): a worker not
   * told otherwise serves every shard announced. Call once at start.
   */
  announceShards(): Promise<number> {
    return this.redis(() => this.shards.announce());
  }

  /** Whether Redis answers (`/readyz`): a ping within the call deadline, at most 1 s. */
  health(): Promise<EngineHealth> {
    return operations.health(this.shards, this.opts.redisTimeoutMs);
  }

  /**
   * Every queue's job counts per BullMQ state on every shard tasks may be on: the configured
   * ones and those an API process once placed tasks on (the highest count announced, read now),
   * so the queues of a lowered count show until drained. Throws when Redis does not answer.
   */
  queueDepth(): Promise<QueueDepth[]> {
    return operations.queueDepth(this.shards, this.opts.redisTimeoutMs);
  }

  /** Bytes each of `tenants`' stored tasks take over all shards (its storage budget's count). */
  storedBytes(tenants: readonly string[]): Promise<Map<string, number>> {
    return operations.storedBytes(this.shards, tenants, this.opts.redisTimeoutMs);
  }

  /** The BullMQ queues of the configured shards, as they are now, for the admin page. */
  adminQueues(): AdminQueue[] {
    return operations.adminQueues(this.shards);
  }

  /**
   * A per-tenant request limit of `perSecond`, counted in Redis so it holds across replicas
   * and doors (`TenantLimiter`), its counters spread over the shards.
   * @example const limiter = engine.rateLimiter(100); await limiter.consume('tenant')
   */
  rateLimiter(perSecond: number): TenantLimiter {
    return operations.rateLimiter(this.shards, perSecond, this.opts.redisTimeoutMs);
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
    const outcome = await this.placement.place(tenant, body, opts);
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
    return this.placement.place(tenant, body, opts);
  }

  /** Submits up to 100 tasks, each on its own (see `submitBatch`); their outcomes in order. */
  submitBatch(
    tenant: string,
    body: unknown,
    opts?: { requestId?: string; traceparent?: string | undefined },
  ): Promise<BatchOutcome> {
    return submitBatch(this, tenant, body, opts);
  }

  /** A new task with the task's type, input, ttl, timeout and tags, naming it (`replayOf`). */
  replay(
    tenant: string,
    id: string,
    opts?: { requestId?: string },
  ): Promise<SubmitOutcome | NotFound> {
    return isTaskId(id) ? this.replays.one(tenant, id, opts) : Promise.resolve(notFound);
  }

  /** Replays up to `limit` (≤ 100) tasks matching `filter` (`replayRequestSchema`), each on its own. */
  replayMany(
    tenant: string,
    body: unknown,
    opts?: { requestId?: string },
  ): Promise<ReplayBatchOutcome> {
    return this.replays.many(tenant, body, opts);
  }

  /** The task's handle: one `HMGET` of what a handle shows; the input only when asked. */
  get(tenant: string, id: string, opts: { input?: boolean } = {}): Promise<GetOutcome> {
    return this.calls.get(tenant, id, opts);
  }

  /** A page of a durable task's steps, oldest first (`GET /v1/jobs/{id}/steps`, issue 40). */
  steps(tenant: string, id: string, query: unknown): Promise<StepsOutcome> {
    return stepPage({ shards: this.shards, redis: (op) => this.redis(op) }, tenant, id, query);
  }

  /** The tenant's tasks, newest first, as summaries (no result) unless `view=full`. */
  list(tenant: string, query: unknown): Promise<ListOutcome> {
    return this.calls.list(tenant, query);
  }

  /** The outcome of a finished task, waiting up to `waitMs` for it to finish. */
  result(tenant: string, id: string, waitMs = 0, signal?: AbortSignal): Promise<ResultOutcome> {
    return this.calls.result(tenant, id, waitMs, signal);
  }

  /** Cancels a task that has not finished; aborts its handler wherever it runs. */
  cancel(tenant: string, id: string): Promise<CancelOutcome> {
    return this.calls.cancel(tenant, id);
  }

  /** Forgets a terminal task now. */
  forget(tenant: string, id: string): Promise<ForgetOutcome> {
    return this.calls.forget(tenant, id);
  }

  /**
   * Answers an `input_required` task and wakes its job. The answer is recorded only if the task
   * still asks the question it was checked against: one asked since (another replica took an
   * answer to the first, and the handler asked again) is `questionChanged`, and waits on.
   */
  answer(tenant: string, id: string, body: unknown): Promise<AnswerOutcome> {
    return this.answers.answer(tenant, id, body);
  }

  /**
   * The task's A2A push notification config (`null`: none; a longrun webhook is not one).
   * Another tenant's task is `notFound`.
   */
  pushConfig(tenant: string, id: string): Promise<PushConfigOutcome> {
    return this.pushConfigs.get(tenant, id);
  }

  /**
   * Gives the task an A2A push notification config (`a2aPushConfigSchema`; its id defaults to the
   * task's): each status change from now on is POSTed there as the A2A task, by the same outbox
   * and delivery workers as a `callback`. A task keeps up to `MAX_PUSH_CONFIGS`: a config of the
   * same id replaces it, another is added (`pushFull` past the cap), and a task with a longrun
   * `callback` is `hasCallback`. The URL is
   * checked as a `callback` URL is. A finished task takes one too (nothing more is sent).
   */
  setPushConfig(tenant: string, id: string, body: unknown): Promise<SetPushConfigOutcome> {
    return this.pushConfigs.set(tenant, id, body);
  }

  /**
   * Removes the task's A2A push notification config `configId`: no status change after it is
   * POSTed there, and deliveries still queued for it are dropped. `absent` when the task has no
   * such config (removing one twice is not an error).
   */
  deletePushConfig(tenant: string, id: string, configId: string): Promise<DeletePushConfigOutcome> {
    return this.pushConfigs.delete(tenant, id, configId);
  }

  /** Opens a watch on the task's changes (SSE), after event `after` when resuming. */
  async watch(tenant: string, id: string, after?: string): Promise<OpenWatch | NotFound> {
    if (!isTaskId(id)) return notFound;
    return this.shards.of(id).watcher.open(tenant, id, after);
  }

  /** Runs one Redis step within the call's deadline, Redis failures turned into store errors. */
  private redis<T>(operation: () => Promise<T>): Promise<T> {
    return this.shards.first.jobs.run(operation, this.opts.redisTimeoutMs);
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
    await this.shards.close();
  }
}
