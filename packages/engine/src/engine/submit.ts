import { toHandle, type CreateJobRequest, type TaskRecord } from '@longrun/core';
import { queueKeys } from '../bullmq-adapter.js';
import { CreateBatch } from '../create-batch.js';
import type { RegisteredJobType } from '../registry/job-type-registry.js';
import type { TaskQueue } from '../task-queue.js';
import type { CreateOutcome, FairTag, TaskStore } from '../task-store.js';
import type { SubmitOutcome, TickOutcome } from './outcomes.js';
import { SubmitRequest, type Idempotency, type RequestDeps } from './submit-request.js';
import type { FaultHooks } from '../fault-hooks.js';
import { activeTracer } from '../tracing/tracer.js';
import { traceSubmit, type SubmitSpan } from '../tracing/spans.js';

export { SCHEDULED } from './submit-request.js';

export interface SubmitDeps extends Omit<RequestDeps, 'keys'> {
  store: TaskStore;
  jobs: TaskQueue;
  pollIntervalMs: number;
  maxOpenTasks: number;
  /** See `TaskEngineOptions.tenantMaxBytes`. */
  tenantMaxBytes?: number | undefined;
  /** See `TaskEngineOptions.fairShare` (unset: on, every weight 1). */
  fairShare?: FairShareOptions | false | undefined;
  /** Runs one Redis step within the request deadline (`TaskQueue.run`). */
  redis<T>(operation: () => Promise<T>): Promise<T>;
  /** Waits, within the deadline, for the connection to be ready. */
  untilReady(): Promise<void>;
  /** Test seam (`FaultHooks.afterCreate`): none in production. */
  faults?: FaultHooks | undefined;
}

/** How the workers are shared between tenants (decision 33). */
export interface FairShareOptions {
  /** A tenant's share relative to others (default 1): weight 2 takes two turns to another's one. */
  weights?: ReadonlyMap<string, number> | undefined;
}

export interface SubmitOptions {
  idempotencyKey?: string | undefined;
  /** Carried in the job so the worker's log lines can name the request that made the task. */
  requestId?: string | undefined;
  /**
   * An A2A push notification config (`a2aPushConfigSchema`) the task starts with, in the place
   * of the body's `callback` (a task has one or the other): its status changes are POSTed there
   * as A2A tasks. Checked as `callback` is; its id defaults to the task's.
   */
  pushConfig?: unknown;
  /**
   * The tenant's caps for this create, in place of the submitter's own (the engine's second try
   * on a shard with what the other shards leave of the whole; 0 = no cap).
   */
  caps?: { maxOpenTasks: number; maxBytes: number } | undefined;
  /** The task this submit replays (`TaskEngine.replay`): kept in the record, shown on the handle. */
  replayOf?: string | undefined;
  /**
   * The W3C `traceparent` the request came with (HTTP header, MCP `_meta`, A2A metadata): the
   * parent of the submit's span when an OpenTelemetry SDK is on (decision 65); ignored if not.
   */
  traceparent?: string | undefined;
  /** The A2A context the task is started in (A2A `contextId`), kept with it. */
  contextId?: string | undefined;
  /** The task whose handler makes this one (`ctx.runTask`, issue 29): kept in the record. */
  parentTaskId?: string | undefined;
}

/** A schedule's tick: its task is made only while the schedule exists (see `TickOutcome`). */
export interface TickOptions extends SubmitOptions {
  /** The schedule whose tick submits this task (kept in the record, shown on the handle). */
  scheduleId: string;
  /** `schedule:<scheduleId>:<tick>`: a tick handed out again finds the task of the first. */
  idempotencyKey: string;
}

/**
 * At most this many creates per script call. With its job, a create costs Redis about 35 µs: a
 * call of 100 would hold Redis for milliseconds while the API, waiting for all of its answers,
 * has nothing to send; calls of 16 let the two work side by side (Node +16 %, Bun +5 % submits
 * per second against calls of 100: docs/BENCHMARKS.md, thirteenth round).
 */
const CREATES_PER_CALL = 16;

/**
 * A submit: validates the request against the job type, then writes the record and its job in
 * the order that keeps a handle from pointing at work that will never run. A record whose job
 * never arrived (a crash between the two writes) is the reconciler's to repair.
 */
export class Submitter {
  /** Reads the request: shape, input, timing, the record and idempotency claim. */
  private readonly request: SubmitRequest;
  /** The creates of one event-loop turn go to Redis as one script call (decision 21). */
  private readonly creates: CreateBatch;

  constructor(private readonly deps: SubmitDeps) {
    this.request = new SubmitRequest({ ...deps, keys: deps.store.keys });
    this.creates = new CreateBatch(deps.store, CREATES_PER_CALL);
  }

  /**
   * Submits a task; a tick's (`TickOptions`) only while its schedule exists, checked in the
   * create's own script (`scheduleGone` otherwise).
   */
  submit(
    tenant: string,
    body: unknown,
    opts: SubmitOptions & { scheduleId?: string } = {},
  ): Promise<TickOutcome> {
    // No OpenTelemetry SDK registered: no span, not even a no-op one.
    const tracer = activeTracer();
    if (!tracer) return this.create(tenant, body, opts);
    return traceSubmit(tracer, opts.traceparent, tenant, (span) =>
      this.create(tenant, body, opts, span),
    );
  }

  private async create(
    tenant: string,
    body: unknown,
    opts: SubmitOptions & { scheduleId?: string },
    span?: SubmitSpan,
  ): Promise<TickOutcome> {
    const read = this.request;
    const request = read.parse(body);
    if ('kind' in request) return request;
    const push = read.parsePush(request, opts.pushConfig);
    if (push && 'kind' in push) return push;
    // A type not known here may have just been registered: only then is the registry re-read.
    const definition = read.checkInput(
      request,
      this.deps.types.get(request.type) ??
        (await this.deps.redis(() => this.deps.types.resolve(request.type))),
    );
    if ('kind' in definition) return definition;
    const timing = read.checkTiming(request, definition);
    if (timing) return timing;
    const record = read.newRecord(tenant, request, definition);
    if (opts.scheduleId) record.scheduleId = opts.scheduleId;
    if (opts.replayOf) record.replayOf = opts.replayOf;
    if (opts.contextId) record.contextId = opts.contextId;
    if (opts.parentTaskId) record.parentTaskId = opts.parentTaskId;
    if (push) record.callback = { ...push, id: push.id || record.id };
    if (span) {
      const queue = this.deps.jobs.queueFor(definition.name).name;
      record.traceparent = span.task(record.id, definition.name, queue);
    }
    const idempotency = opts.idempotencyKey
      ? read.claim(tenant, record.id, opts.idempotencyKey, request, push)
      : undefined;
    const enqueue = { priority: request.priority, requestId: opts.requestId };
    const maxBytes = opts.caps?.maxBytes ?? this.deps.tenantMaxBytes ?? 0;
    const maxOpenTasks = opts.caps?.maxOpenTasks ?? this.deps.maxOpenTasks;
    const fair = this.fairTag(tenant, request, definition);
    // The job goes with the record, in the create's own script, unless it cannot (see
    // bullmq-adapter.ts) or a test stops the API between the two.
    const job = this.deps.faults?.afterCreate
      ? undefined
      : this.deps.jobs.prepare(record, definition, { ...enqueue, fairShare: Boolean(fair) });
    if (!idempotency && maxOpenTasks === 0 && maxBytes === 0 && !fair && !job && !opts.scheduleId) {
      return this.unguarded(record, definition, enqueue);
    }
    if (!this.deps.jobs.ready) await this.deps.untilReady();
    const pending = this.creates.create({
      record,
      idempotency,
      maxOpenTasks,
      maxBytes,
      fair,
      job,
    });
    let outcome: CreateOutcome;
    try {
      outcome = await this.deps.redis(() => pending.outcome);
    } catch (error) {
      // A create that timed out may still run once Redis is free: remove it after it (it is on
      // the connection once `written`; commands on one connection run in order), with its job;
      // unless it landed and another request was handed the task meanwhile (a replay of its
      // key), or it ran: then it stays, and this request answers as the create it was.
      await pending.written;
      const kept = job
        ? await this.withdraw(record, definition, idempotency)
        : await this.deps
            .redis(() => this.deps.store.discard(record, idempotency))
            .then((done) => done === 'kept')
            .catch(() => false);
      if (kept) return { kind: 'created', task: toHandle(record, this.deps.pollIntervalMs) };
      throw error;
    }
    if ('gone' in outcome) return { kind: 'scheduleGone' };
    if ('full' in outcome) {
      return { kind: 'full', openTasks: outcome.openTasks, cap: maxOpenTasks };
    }
    if ('over' in outcome) {
      return {
        kind: 'overBudget',
        usedBytes: outcome.usedBytes,
        maxBytes,
        retryAfterMs: outcome.retryAfterMs,
      };
    }
    if (!outcome.created) return this.replay(tenant, outcome.idempotencyValue, idempotency);
    if (job) return { kind: 'created', task: toHandle(record, this.deps.pollIntervalMs) };
    this.deps.faults?.afterCreate?.();
    // Under fair share the job's priority is the tenant's turn, given by the create.
    if (outcome.priority !== undefined) enqueue.priority = outcome.priority;
    try {
      await this.deps.redis(() => this.deps.jobs.enqueue(record, definition, enqueue));
    } catch (error) {
      // A task another request was handed meanwhile stays: its job is the reconciler's to add.
      if (!(await this.withdraw(record, definition, idempotency))) throw error;
    }
    return { kind: 'created', task: toHandle(record, this.deps.pollIntervalMs) };
  }

  /**
   * Where the task's turn comes from under fair share: its queue's tags, the tenant's step, and
   * its own `priority` as an offset (priority 3 runs two turns after the tenant's next).
   */
  private fairTag(
    tenant: string,
    request: CreateJobRequest,
    definition: RegisteredJobType,
  ): FairTag | undefined {
    const fair = this.deps.fairShare;
    if (fair === false) return undefined;
    const queue = this.deps.jobs.queueFor(definition.name);
    return {
      key: this.deps.store.keys.fairShare(queue.name),
      head: queueKeys(queue).prioritized,
      step: 1 / (fair?.weights?.get(tenant) ?? 1),
      offset: (request.priority ?? 1) - 1,
    };
  }

  /**
   * Nothing can refuse this create (no idempotency key, no cap, no schedule): the job follows the record at
   * once, without waiting for its answer, in the same write and round trip. Redis runs them in
   * that order.
   */
  private async unguarded(
    record: TaskRecord,
    definition: RegisteredJobType,
    enqueue: { priority?: number | undefined; requestId?: string | undefined },
  ): Promise<SubmitOutcome> {
    if (!this.deps.jobs.ready) await this.deps.untilReady();
    const pending = this.creates.create({ record });
    await pending.written;
    const [stored, queued] = await Promise.allSettled([
      this.deps.redis(() => pending.outcome),
      this.deps.redis(() => this.deps.jobs.enqueue(record, definition, enqueue)),
    ]);
    if (stored.status === 'rejected' || queued.status === 'rejected') {
      // Kept: it landed and ran meanwhile (its job did arrive), so it is this request's task.
      if (!(await this.withdraw(record, definition))) {
        throw stored.status === 'rejected'
          ? stored.reason
          : (queued as PromiseRejectedResult).reason;
      }
    }
    return { kind: 'created', task: toHandle(record, this.deps.pollIntervalMs) };
  }

  /**
   * The key was claimed before: the same body gets the first task's handle. Nothing is added to
   * the queue here: a job that never arrived is the reconciler's to repair, and adding one now
   * could run a finished task again (its job is removed once it completes).
   */
  private async replay(
    tenant: string,
    idempotencyValue: string,
    ours: Idempotency | undefined,
  ): Promise<SubmitOutcome> {
    const [existingId = '', existingHash] = idempotencyValue.split(' ');
    if (existingHash !== ours?.value.split(' ')[1]) return { kind: 'keyReused' };
    const view = await this.deps.redis(() => this.deps.store.peek(existingId));
    if (!view || view.tenant !== tenant) return { kind: 'keyInFlux' };
    return { kind: 'replayed', task: toHandle(view, this.deps.pollIntervalMs) };
  }

  /**
   * Takes back whatever of the task landed, so no handle points at work that will never run. A
   * write that timed out may still land (commands on a connection run in order): the removal is
   * sent after it, and a worker that took the job in between is told to stop. But a task that
   * another request was handed (a replay of its idempotency key) or that ran is never taken
   * back (`TaskStore.discard`): then it stays whole, job and all, and this returns `true`.
   */
  private async withdraw(
    record: TaskRecord,
    definition: RegisteredJobType,
    idempotency?: Idempotency,
  ): Promise<boolean> {
    const { store, jobs } = this.deps;
    return this.deps
      .redis(async () => {
        // The record first: its answer says whether the job may go too.
        if ((await store.discard(record, idempotency)) === 'kept') return true;
        await Promise.all([
          jobs.removeJob(record.id, definition.name),
          jobs.broadcastCancel(record.id),
        ]);
        return false;
      })
      .catch(() => false);
  }
}
