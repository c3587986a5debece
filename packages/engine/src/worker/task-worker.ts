import type { Span } from '@opentelemetry/api';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobCatalog } from '@longrun/core';
import { CompletionBatch } from '../completion-batch.js';
import { QUEUE_NAME, queueNameFor, taskKeys } from '../keys.js';
import { DurableStore } from '../durable-store.js';
import { TaskStore } from '../task-store.js';
import type { DurableHost } from './durable-host.js';
import type { FaultHooks } from '../fault-hooks.js';
import { RUN_END_LINES } from './job-data.js';
import type { RunOutcome, RunTask, TaskJobData, TaskWorkerLogger } from './job-data.js';
import { GiveBack, type LiveTypes } from './give-back.js';
import { childTask, firstRunTask, isFirstRun, takeTask } from './take-task.js';
import { RunRegistry } from './run-control.js';
import { MarkClock } from './mark-clock.js';
import { RunSlots } from './run-slots.js';
import { runLimits, TaskRun, type RunEnd } from './task-run.js';
import { activeTracer } from '../tracing/tracer.js';
import { endRunSpan, traceRun } from '../tracing/spans.js';

export { GIVE_BACK_BASE_MS, GIVE_BACK_MAX_MS } from './give-back.js';

export interface TaskWorkerOptions {
  /** A worker-role connection (`maxRetriesPerRequest: null`); BullMQ duplicates it for blocking. */
  connection: Redis;
  /** A separate connection used only to receive cancel broadcasts. */
  subscriber: Redis;
  prefix: string;
  /** The configured prefix when `prefix` is a shard's (its channels are shared; see `taskKeys`). */
  channelPrefix?: string | undefined;
  maxTtlMs: number;
  catalog: JobCatalog;
  types?: readonly string[] | undefined; // only these job types' queues (default: the catalog's)
  concurrency: number;
  /**
   * The process's run slots, shared by its TaskWorkers (one per shard), since BullMQ's
   * `concurrency` is per queue, a queue per type. Default: a set of `concurrency` of its own.
   */
  slots?: RunSlots | undefined;
  lockDurationMs?: number | undefined;
  expiredGraceMs?: number | undefined; // a task that ended `expired` stays readable (10 min)
  stalledIntervalMs?: number | undefined;
  maxStalledCount?: number | undefined;
  logger: TaskWorkerLogger;
  onRun?: (type: string, outcome: RunOutcome, durationMs: number) => void; // once per run
  onActiveChange?: (delta: 1 | -1) => void;
  /**
   * Called when a task's first run starts, with how long its job waited in the queue (from the
   * submit or its delay's end). Not for retries, resumed runs: their wait is not queue capacity.
   */
  onQueueWait?: (type: string, waitMs: number) => void;
  /**
   * A first run marks its task `running` only once its handler has run this long, so jobs that
   * finish sooner cost one script, not two (default 100). `0` checks and marks every run before
   * its handler starts, in the script that reads the record (as every re-run and retry does).
   */
  runningMarkMs?: number | undefined;
  /** A result whose JSON is longer fails its task (`result-too-large`); 0: no cap (2 MiB). */
  maxResultBytes?: number | undefined;
  /** Durable handlers: child tasks, `ctx.step` calls a task records (1 000); live types. */
  maxSteps?: number | undefined;
  durableHost?: DurableHost | undefined;
  liveTypes?: LiveTypes | undefined;
  faults?: FaultHooks | undefined; // test seam: `afterPark` runs between parking and recording
}

/**
 * Runs longrun jobs: one BullMQ worker per queue, whose processor takes the task (from the job,
 * or by the `start` event), runs it as a `TaskRun` and returns or throws as BullMQ expects.
 *
 * It consumes the queues of the types it serves and the legacy shared `tasks` queue (jobs an
 * older version placed there). A job of a type it does not serve (found in the legacy queue, or
 * on a queue that two services' types both name) is given back untouched: moved to BullMQ's
 * delayed set for a moment, its attempts not counted, for a worker that serves it.
 */
export class TaskWorker {
  /** One BullMQ worker per queue this process consumes. */
  readonly workers: Worker[];
  private readonly store: TaskStore;
  private readonly runs = new RunRegistry();
  private readonly runningMarkMs: number;
  /** The errors our processor threw: any other `failed` is BullMQ's own (e.g. stalled too often). */
  private readonly ownErrors = new WeakSet<Error>();
  private readonly deps: ConstructorParameters<typeof TaskRun>[0];
  private readonly served: ReadonlySet<string>; // the types it runs: any other job is given back
  private readonly slots: RunSlots;
  private readonly giveBack: GiveBack;

  constructor(private readonly opts: TaskWorkerOptions) {
    this.runningMarkMs = opts.runningMarkMs ?? 100;
    this.store = new TaskStore(opts.connection, opts.prefix, opts.maxTtlMs, opts.channelPrefix);
    this.deps = {
      store: this.store,
      durable: new DurableStore(opts.connection, this.store.keys),
      host: opts.durableHost,
      // Completions of jobs that finish in the same turn go to Redis together.
      completions: new CompletionBatch(this.store),
      catalog: opts.catalog,
      marks: new MarkClock(this.runningMarkMs),
      ...runLimits(opts),
      lockDurationMs: opts.lockDurationMs ?? 30_000,
      expiredGraceMs: opts.expiredGraceMs,
      onActiveChange: opts.onActiveChange,
      logWarn: (obj, msg) => opts.logger.warn(obj, msg),
      faults: opts.faults,
      completed: (run, outcome, error) => this.completed(run, outcome, error),
    };
    // Two declared parameters: BullMQ makes an AbortController per job only for processors that
    // declare a third; runs are stopped through `RunControl` instead.
    const processor = (job: Job, token?: string) => this.process(job, token);
    const types = opts.types ?? [...opts.catalog.keys()];
    for (const type of types) {
      if (!opts.catalog.has(type)) throw new Error(`Unknown job type in worker types: ${type}`);
    }
    this.served = new Set(types);
    this.giveBack = new GiveBack(this.served, opts.logger, opts.liveTypes);
    this.slots = opts.slots ?? new RunSlots(Math.max(1, opts.concurrency));
    const queueNames = new Set([
      ...types.map((t) => queueNameFor(opts.catalog.get(t)!)),
      QUEUE_NAME,
    ]);
    // A rate-limited type has a queue of its own (checked by createWorker): its limiter is the queue's.
    const limiters = new Map(
      [...opts.catalog.values()]
        .filter((d) => d.rateLimit)
        .map((d) => [queueNameFor(d), d.rateLimit!] as const),
    );
    this.workers = [...queueNames].map((name) => {
      const limit = limiters.get(name);
      const worker = new Worker(name, processor, {
        connection: opts.connection,
        prefix: opts.prefix,
        concurrency: opts.concurrency,
        ...(opts.lockDurationMs ? { lockDuration: opts.lockDurationMs } : {}),
        ...(opts.stalledIntervalMs ? { stalledInterval: opts.stalledIntervalMs } : {}),
        maxStalledCount: opts.maxStalledCount ?? 3,
        ...(limit ? { limiter: { max: limit.max, duration: limit.durationMs } } : {}),
        autorun: false,
      });
      worker.on('error', (err) => opts.logger.warn({ err, queue: name }, 'worker error'));
      worker.on('failed', (job, err) => void this.onFailed(job, err));
      return worker;
    });
  }

  /** Jobs each queue's BullMQ worker runs at once from now on (a worker serving more shards). */
  setConcurrency(concurrency: number): void {
    for (const worker of this.workers) worker.concurrency = concurrency;
  }

  /** Names of the queues this process consumes. */
  get queueNames(): string[] {
    return this.workers.map((w) => w.name);
  }

  /** Subscribes to cancel broadcasts, then starts taking jobs. */
  async start(): Promise<void> {
    const channel = taskKeys(this.opts.prefix, this.opts.channelPrefix).cancelChannel;
    this.opts.subscriber.on('message', (ch: string, taskId: string) => {
      if (ch !== channel) return;
      if (this.runs.cancel(taskId))
        this.opts.logger.info({ taskId }, 'cancel: aborted running handler');
      else this.opts.logger.debug?.({ taskId }, 'cancel: remembered for a job not running here');
    });
    await this.opts.subscriber.subscribe(channel);
    for (const worker of this.workers) void worker.run();
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
  }

  /** Stops taking jobs and waits for running ones to finish; `force` abandons them to stall recovery. */
  async close(force = false): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close(force)));
  }

  /** BullMQ's processor: returns when the run completed, throws to retry, fail or park. */
  private async process(job: Job, token?: string): Promise<void> {
    if (!this.served.has(job.name)) return this.giveBack.job(job, token);
    const release = this.slots.tryAcquire() ?? (await this.slots.acquire());
    try {
      return await this.runJob(job, token);
    } finally {
      release();
    }
  }

  private runJob(job: Job, token?: string): Promise<void> | void {
    const started = Date.now();
    const fast = isFirstRun(job, this.runningMarkMs);
    if (this.runs.wasCancelled(job.id ?? '')) return this.begin(job, null, fast, started, token);
    // A first run takes its task from the job, at once; any other reads it (the start event). A
    // child asks its parent first: it may not run yet, or not at all (issue 40, `childTask`).
    const [host, first] = [this.opts.durableHost, fast ? firstRunTask(job, started) : undefined];
    if (first !== undefined && (!first?.parentTaskId || !host))
      return this.begin(job, first, fast, started, token);
    const task = first
      ? childTask(host, first, job, token)
      : takeTask(this.store, job, host, token);
    return task.then((t) => this.begin(job, t, fast, started, token));
  }

  /** Runs the task taken (in a span when traced), or ends a run that has nothing to run. */
  private begin(
    job: Job,
    task: RunTask | null,
    fast: boolean,
    started: number,
    token: string | undefined,
  ): Promise<void> | void {
    if (!task) {
      // Cancelled, expired, forgotten, or finished by a run that crashed before acking: no run.
      this.ended(job, job.name, 'skipped', started);
      return;
    }
    let waitMs: number | undefined;
    if (job.attemptsMade === 0 && (job.attemptsStarted ?? 1) <= 1) {
      // Clocks of the API's and this host may differ a little: never a negative wait.
      // BullMQ zeroes `job.delay` when it promotes a delayed job; the option keeps the delay.
      waitMs = Math.max(0, started - job.timestamp - (job.opts.delay ?? 0));
      this.opts.onQueueWait?.(task.type, waitMs);
    }
    // Without an OpenTelemetry SDK, no span (decision 65).
    const tracer = activeTracer();
    if (!tracer) return this.runTask(job, task, fast, started, token);
    const attempt = job.attemptsMade + 1;
    const parent = task.traceparent ?? ((job.data ?? {}) as TaskJobData).traceparent;
    const facts = { taskId: task.id, type: task.type, queue: job.queueName, attempt, parent };
    return traceRun(
      tracer,
      { ...facts, startedAt: started, previousRun: task.lastRunTrace, queueWaitMs: waitMs },
      task,
      (span) => this.runTask(job, task, fast, started, token, span),
    );
  }

  /** Runs a task taken (in its span when traced); returns or throws as BullMQ expects. */
  private async runTask(
    job: Job,
    task: RunTask,
    fast: boolean,
    started: number,
    token: string | undefined,
    span?: Span,
  ): Promise<void> {
    const taskId = task.id;
    const logger = this.opts.logger;
    const run = new TaskRun(this.deps, job, task, fast, token);
    if (logger.isLevelEnabled?.('info') ?? true) {
      const requestId = ((job.data ?? {}) as TaskJobData).requestId;
      logger.info({ taskId, type: task.type, attempt: run.attempt, requestId }, 'task started');
    }
    run.started = started;
    run.span = span;
    this.runs.track(taskId, run.control);
    let end: RunEnd;
    try {
      end = await run.execute();
    } catch (error) {
      if (span) endRunSpan(span, 'failed', error);
      throw error;
    } finally {
      this.runs.untrack(taskId, run.control);
    }
    const thrown = end.thrown;
    // A completion's answer (completed, or refused) reaches `completed` below, after returning.
    if (end.outcome !== 'completing') {
      this.ended(job, task.type, end.outcome, started, span, thrown);
      if (end.outcome === 'failed') this.tellParent(task);
    }
    if (thrown) {
      this.ownErrors.add(thrown);
      throw thrown;
    }
  }

  /** How a run's completion ended, once Redis answered (`RunDeps.completed`). */
  private completed(run: TaskRun, outcome: RunOutcome, error?: unknown): void {
    if (error !== undefined) {
      this.opts.logger.error(
        { err: error, taskId: run.task.id },
        'could not record the completion',
      );
    }
    this.ended(run.job, run.task.type, outcome, run.started, run.span, error, run.attempt);
    if (outcome === 'completed') this.tellParent(run.task);
  }

  /** A child task ended here: its parent counts it, and wakes when it was the last (issue 29). */
  private tellParent(task: RunTask): void {
    const parent = task.parentTaskId;
    const host = this.opts.durableHost;
    if (!parent || !host) return;
    host
      .childEnded(parent, task.id)
      .catch((err: unknown) =>
        this.opts.logger.warn({ err, taskId: task.id, parent }, 'could not tell the parent task'),
      );
  }

  /**
   * One line per run's end, after the run's `task started`: `task completed`, `task failed` (no
   * attempt left), else `task run ended` with its outcome (retrying, cancelled, input_required),
   * all at `info`; a run skipped before it started (cancelled, expired, already done) at `debug`.
   * An operator reading a worker's log at the default level sees every task it ran and how it
   * ended (two lines per run cost some CPU on very short jobs: `LOG_LEVEL=warn` drops them).
   */
  private ended(
    job: Job,
    type: string,
    outcome: RunOutcome,
    started: number,
    span?: Span,
    error?: unknown,
    attempt = job.attemptsMade + 1, // a completion's: the run's (`TaskRun.attempt`)
  ): void {
    const logger = this.opts.logger;
    const durationMs = Date.now() - started;
    const quiet = outcome === 'skipped';
    // The line is built only for a level that writes it (a flood of short jobs at `warn`).
    if (logger.isLevelEnabled?.(quiet ? 'debug' : 'info') ?? true) {
      const data = (job.data ?? {}) as TaskJobData;
      const line = {
        taskId: job.id,
        type,
        attempt,
        requestId: data.requestId,
        outcome,
        durationMs,
      };
      if (quiet) logger.debug?.(line, 'task run ended');
      else logger.info(line, RUN_END_LINES[outcome] ?? 'task run ended');
    }
    this.opts.onRun?.(type, outcome, durationMs);
    if (span) endRunSpan(span, outcome, error);
  }

  /** A job BullMQ failed without our processor deciding it (e.g. it stalled too often). */
  private async onFailed(job: Job | undefined, err: Error): Promise<void> {
    if (!job?.id || this.ownErrors.has(err)) return;
    try {
      await this.store.transition(job.id, 'jobLost', {
        error: { message: `Worker lost the job too many times: ${err.message}`, code: 'job-lost' },
      });
    } catch (error) {
      this.opts.logger.error({ err: error, taskId: job.id }, 'could not record stalled failure');
    }
  }
}
