import { createHash, randomUUID } from 'node:crypto';
import { Queue, type JobSchedulerTemplateOptions, type RepeatOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  createScheduleRequestSchema,
  fieldErrors,
  isTaskId,
  type CreateScheduleRequest,
  type Schedule,
} from '@longrun/core';
import { SCHEDULE_QUEUE_NAME, taskKeys, type TaskKeys } from '../keys.js';
import type { JobTypeDirectory } from '../registry/job-type-directory.js';
import { ScheduleStore, type ScheduleRecord, type ScheduleSpec } from '../schedule-store.js';
import { checkScheduleTiming, DEFAULT_SCHEDULE_TZ } from '../schedule-timing.js';
import { stableJson } from '../stable-json.js';
import type { TaskWorkerLogger } from '../worker/job-data.js';
import {
  invalid,
  notFound,
  type CreateScheduleOutcome,
  type DeleteScheduleOutcome,
  type GetScheduleOutcome,
  type ScheduleListOutcome,
  type TickOutcome,
} from './outcomes.js';
import { ScheduleTicker } from './schedule-ticker.js';
import type { TickOptions } from './submit.js';
import { unknownJobType } from './unknown-type.js';

export interface SchedulesDeps {
  /** The engine's producer connection (the store and the `schedules` queue's writes). */
  connection: Redis;
  prefix: string;
  types: JobTypeDirectory;
  maxTtlMs: number;
  /** The shortest `everyMs`, and the closest two runs of a cron may be. */
  minEveryMs: number;
  /** Schedules one tenant may have. */
  maxPerTenant: number;
  /** Runs one Redis step within the call's deadline (`TaskEngine.redis`). */
  redis<T>(operation: () => Promise<T>): Promise<T>;
  /** The engine's tick submit (`submitTick`), which every tick goes through. */
  submit(tenant: string, body: unknown, opts: TickOptions): Promise<TickOutcome>;
  logger?: TaskWorkerLogger | undefined;
}

/**
 * How long a schedule create's Idempotency-Key holds (a day, as long as a client would retry);
 * deleting the schedule releases it at once.
 */
const SCHEDULE_IDEMPOTENCY_TTL_MS = 86_400_000;

/**
 * How each tick job is kept: a tick that fails on Redis is tried again (its idempotency key
 * makes a retry find the first try's task); finished ticks are not kept.
 */
const TICK_OPTIONS: JobSchedulerTemplateOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: true,
  removeOnFail: true,
};

/**
 * Recurring tasks, per tenant: a schedule is a hash of what each run submits (`ScheduleStore`)
 * and a BullMQ job scheduler of the same id on the `schedules` queue, which puts one tick job
 * there per run; the `ScheduleTicker` turns each into the engine's ordinary submit, with the
 * schedule's id on the task. BullMQ keeps one job per tick however many processes produce or
 * consume, so a tick makes one task (decision 32).
 */
export class Schedules {
  readonly store: ScheduleStore;
  /** The queue the job schedulers fill with ticks. */
  readonly queue: Queue;
  private readonly schema: ReturnType<typeof createScheduleRequestSchema>;
  private ticker: ScheduleTicker | undefined;

  private readonly keys: TaskKeys;

  constructor(private readonly deps: SchedulesDeps) {
    this.keys = taskKeys(deps.prefix);
    this.store = new ScheduleStore(deps.connection, this.keys);
    this.queue = new Queue(SCHEDULE_QUEUE_NAME, {
      connection: deps.connection,
      prefix: deps.prefix,
    });
    // Errors surface on the calls that hit them; without a listener EventEmitter would throw.
    this.queue.on('error', () => undefined);
    this.schema = createScheduleRequestSchema(deps.maxTtlMs, deps.minEveryMs);
  }

  /**
   * Validates the schedule as a submit of its task would be (unknown type `400`, input that does
   * not match `422`), and its timing; stores it, then starts its job scheduler.
   */
  async create(
    tenant: string,
    body: unknown,
    opts: { idempotencyKey?: string | undefined } = {},
  ): Promise<CreateScheduleOutcome> {
    const parsed = this.schema.safeParse(body);
    if (!parsed.success) {
      return invalid(400, 'The request body is invalid', fieldErrors(parsed.error));
    }
    const request = parsed.data;
    const id = randomUUID();
    const { redis } = this.deps;
    const claim = opts.idempotencyKey
      ? {
          key: this.keys.scheduleIdempotency(tenant, sha256(opts.idempotencyKey)),
          value: `${id} ${sha256(stableJson(request))}`,
          ttlMs: SCHEDULE_IDEMPOTENCY_TTL_MS,
        }
      : undefined;
    // The cap (and a replay) before the cron is looked at: a tenant at its cap gets the cap's
    // problem without costing the event loop a pattern search (issue 27 #14). `add` checks
    // the cap again, atomically with the write.
    const room = await redis(() => this.store.room(tenant, this.deps.maxPerTenant, claim?.key));
    if ('claimed' in room) return this.replay(tenant, room.claimed, claim?.value ?? '');
    if (!room.room) {
      return { kind: 'tooManySchedules', schedules: room.count, cap: this.deps.maxPerTenant };
    }
    const timing = checkScheduleTiming(request, this.deps.minEveryMs);
    if (!timing.ok) return invalid(400, 'The schedule is invalid', [timing.error]);
    const refused = await this.checkJob(request);
    if (refused) return refused;

    const record: ScheduleRecord = { id, tenant, createdAt: Date.now(), spec: specOf(request) };
    const added = await redis(() => this.store.add(record, this.deps.maxPerTenant, claim));
    if ('claimed' in added) return this.replay(tenant, added.claimed, claim?.value ?? '');
    if (!added.added) {
      return { kind: 'tooManySchedules', schedules: added.count, cap: this.deps.maxPerTenant };
    }
    // The hash first: an `everyMs` schedule's first tick is due at once, and a tick that finds
    // no schedule removes its job scheduler.
    try {
      await redis(() =>
        this.queue.upsertJobScheduler(record.id, repeatOf(record.spec), {
          name: 'tick',
          data: { scheduleId: record.id },
          opts: TICK_OPTIONS,
        }),
      );
    } catch (error) {
      await redis(() => this.store.remove(record)).catch(() => undefined);
      throw error;
    }
    return { kind: 'created', schedule: view(record, await this.nextRunAt(record.id)) };
  }

  /**
   * The key was claimed before: the same body gets the first schedule back; another body is
   * `keyReused`. A claim whose schedule is gone is one being removed (the claim goes with it).
   */
  private async replay(
    tenant: string,
    claimed: string,
    ours: string,
  ): Promise<CreateScheduleOutcome> {
    const [id = '', hash] = claimed.split(' ');
    if (hash !== ours.split(' ')[1]) return { kind: 'keyReused' };
    const record = await this.owned(tenant, id);
    if (!record) return { kind: 'keyInFlux' };
    return { kind: 'replayed', schedule: view(record, await this.nextRunAt(id)) };
  }

  /** The schedule, with when it runs next. */
  async get(tenant: string, id: string): Promise<GetScheduleOutcome> {
    const record = await this.owned(tenant, id);
    if (!record) return notFound;
    return { kind: 'found', schedule: view(record, await this.nextRunAt(id)) };
  }

  /** Every schedule of the tenant (at most `maxPerTenant`), newest first. */
  async list(tenant: string): Promise<ScheduleListOutcome> {
    const records = await this.deps.redis(() => this.store.list(tenant));
    const next = await Promise.all(records.map((r) => this.nextRunAt(r.id)));
    return { kind: 'list', schedules: records.map((r, i) => view(r, next[i] ?? null)) };
  }

  /**
   * Stops the schedule: its job scheduler first (no tick after it), then its record. A tick
   * already being turned into a task makes it only if its create runs before the record is
   * removed (the create checks the record in its own script): once this answers, none does.
   */
  async delete(tenant: string, id: string): Promise<DeleteScheduleOutcome> {
    const record = await this.owned(tenant, id);
    if (!record) return notFound;
    await this.deps.redis(() => this.queue.removeJobScheduler(id));
    await this.deps.redis(() => this.store.remove(record));
    return { kind: 'deleted' };
  }

  /**
   * Starts turning this prefix's ticks into tasks in this process (API processes do, each on a
   * worker-role connection of its own; any number may). The caller closes the connection after
   * `close()`.
   */
  async startTicker(connection: Redis): Promise<void> {
    const { redis } = this.deps;
    this.ticker ??= new ScheduleTicker({
      connection,
      prefix: this.deps.prefix,
      read: (id) => redis(() => this.store.get(id)),
      submit: this.deps.submit,
      noteRun: (id, at, taskId) => redis(() => this.store.noteRun(id, at, taskId)),
      noteError: (id, at, message) => redis(() => this.store.noteError(id, at, message)),
      removeScheduler: (id) => redis(() => this.queue.removeJobScheduler(id)),
      logger: this.deps.logger,
    });
    await this.ticker.start();
  }

  async close(): Promise<void> {
    await this.ticker?.close();
    await this.queue.close();
  }

  /** The schedule, if it exists and belongs to `tenant`. */
  private async owned(tenant: string, id: string): Promise<ScheduleRecord | null> {
    // Schedule ids are UUIDs, like task ids: anything else names no schedule.
    if (!isTaskId(id)) return null;
    const record = await this.deps.redis(() => this.store.get(id));
    return record && record.tenant === tenant ? record : null;
  }

  /** When BullMQ will put the schedule's next tick in the queue; `null` without a scheduler. */
  private async nextRunAt(id: string): Promise<number | null> {
    const scheduler = await this.deps.redis(() => this.queue.getJobScheduler(id));
    return scheduler?.next ?? null;
  }

  /** A submit of the schedule's task would be accepted: its type is known and its input fits. */
  private async checkJob(request: CreateScheduleRequest): Promise<CreateScheduleOutcome | null> {
    const { types, redis } = this.deps;
    const definition = types.get(request.type) ?? (await redis(() => types.resolve(request.type)));
    if (!definition) {
      return unknownJobType(request.type, types.names);
    }
    const errors = types.validate(definition, request.input);
    if (errors.length > 0) {
      return invalid(422, `The input does not match job type "${request.type}"`, errors);
    }
    if (
      request.timeoutMs !== undefined &&
      definition.timeoutMs !== undefined &&
      request.timeoutMs > definition.timeoutMs
    ) {
      return invalid(400, 'The request body is invalid', [
        {
          path: 'timeoutMs',
          message: `must not exceed job type "${definition.name}"'s own timeout of ${definition.timeoutMs} ms`,
        },
      ]);
    }
    return null;
  }
}

/** What is stored of a create request: its fields as given, the time zone made explicit. */
function specOf(request: CreateScheduleRequest): ScheduleSpec {
  const spec: ScheduleSpec = { type: request.type, input: request.input };
  if (request.cron !== undefined) {
    spec.cron = request.cron;
    spec.tz = request.tz ?? DEFAULT_SCHEDULE_TZ;
  }
  if (request.everyMs !== undefined) spec.everyMs = request.everyMs;
  if (request.ttlMs !== undefined) spec.ttlMs = request.ttlMs;
  if (request.timeoutMs !== undefined) spec.timeoutMs = request.timeoutMs;
  return spec;
}

/** The job scheduler's repeat options: a cron in its zone, or a period (first tick at once). */
function repeatOf(spec: ScheduleSpec): Omit<RepeatOptions, 'key'> {
  return spec.cron !== undefined
    ? { pattern: spec.cron, tz: spec.tz ?? DEFAULT_SCHEDULE_TZ }
    : { every: spec.everyMs as number };
}

/** The schedule as the API shows it. */
function view(record: ScheduleRecord, nextRunAt: number | null): Schedule {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    scheduleId: record.id,
    ...record.spec,
    createdAt: iso(record.createdAt),
    nextRunAt: nextRunAt === null ? null : iso(nextRunAt),
    ...(record.lastRunAt !== undefined ? { lastRunAt: iso(record.lastRunAt) } : {}),
    ...(record.lastTaskId !== undefined ? { lastTaskId: record.lastTaskId } : {}),
    ...(record.lastError
      ? { lastError: { message: record.lastError.message, at: iso(record.lastError.at) } }
      : {}),
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
