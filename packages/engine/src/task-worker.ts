import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { isTerminal, toTaskStatus, type JobCatalog, type JobContext } from '@longrun/core';
import { queueNameFor } from './keys.js';
import { TaskStore, type TransitionOutcome } from './task-store.js';
import { CompletionBatch } from './completion-batch.js';

/** How one run of a job ended, for metrics and logs. */
export type RunOutcome =
  'completed' | 'failed' | 'retrying' | 'cancelled' | 'input_required' | 'skipped';

export interface TaskWorkerLogger {
  /** pino's: lets a run skip building log lines nobody will see. */
  isLevelEnabled?(level: string): boolean;
  debug?(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface TaskWorkerOptions {
  /** A worker-role connection (`maxRetriesPerRequest: null`); BullMQ duplicates it for blocking. */
  connection: Redis;
  /** A separate connection used only to receive cancel broadcasts. */
  subscriber: Redis;
  prefix: string;
  maxTtlMs: number;
  catalog: JobCatalog;
  /** Run only these job types (their queues); default: every type in the catalog. */
  types?: readonly string[];
  concurrency: number;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  maxStalledCount?: number;
  logger: TaskWorkerLogger;
  /** Called once per run, e.g. to count outcomes and durations. */
  onRun?: (type: string, outcome: RunOutcome, durationMs: number) => void;
  onActiveChange?: (delta: 1 | -1) => void;
  /**
   * A first run marks its task `running` only once its handler has run this long, so jobs that
   * finish sooner cost one script, not two (default 100). `0` checks and marks every run before
   * its handler starts, in the same script that reads the record (the path every re-run, retry
   * and resumed run takes anyway).
   */
  runningMarkMs?: number;
}

/** What the API puts in a job's data (older jobs carry only `tenant`/`requestId`). */
export interface TaskJobData {
  tenant?: string;
  requestId?: string;
  /** The task's input, so a first run needs no read of the record. */
  input?: Record<string, unknown>;
  /** When the task expires (ms since the epoch). */
  expiresAt?: number;
}

/** What a run needs of its task. */
interface RunTask {
  id: string;
  type: string;
  input: Record<string, unknown>;
  /** Answers to earlier `requestInput` calls, in order. */
  inputs: unknown[];
  /** Whether `inputs` came from the record (a first run starts without reading it). */
  inputsRead: boolean;
  expiresAt: number;
}

/** How long a cancel broadcast for a job this process has not (yet) started is remembered. */
const CANCEL_MEMORY_MS = 60_000;
const CANCEL_MEMORY_MAX = 10_000;

/** What a run writes when it starts (or, on the fast path, once it has run for a while). */
const RUNNING = {
  status: toTaskStatus('active', { cancelRequested: false, awaitingInput: false }),
  statusMessage: 'running',
  awaitingInput: false,
} as const;

/**
 * How a run is stopped: a cancel broadcast, or a write that finds the task gone or finished. The
 * handler's `AbortSignal` is made only when the handler reads `ctx.signal` (an `AbortController`
 * per job showed in the worker's profile, and a short handler never looks at it); one made after
 * the run was stopped is aborted already.
 */
class RunControl {
  private controller?: AbortController;
  private reason?: Error;

  get aborted(): boolean {
    return this.reason !== undefined;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.reason) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/** Thrown by `ctx.requestInput` to park a job; the processor turns it into BullMQ's DelayedError. */
class InputParked extends Error {
  override name = 'InputParked';
}

/**
 * Runs longrun jobs: reads the task record, runs the handler from the catalog and writes every
 * transition to the record (guarded, so a cancelled task never becomes completed).
 */
export class TaskWorker {
  /** One BullMQ worker per queue this process consumes. */
  readonly workers: Worker[];
  private readonly store: TaskStore;
  /** Completions of jobs that finish in the same turn go to Redis together. */
  private readonly completions: CompletionBatch;
  private readonly opts: TaskWorkerOptions;
  private readonly runningMarkMs: number;
  /**
   * Cancels broadcast for jobs no handler here was running: a job taken in the instant between
   * the API's cancel and its broadcast would otherwise start unchecked on the fast path.
   */
  private readonly cancelledLately = new Map<string, number>();
  /** The runs in progress here, by task id, so a cancel broadcast can stop one. */
  private readonly running = new Map<string, RunControl>();

  constructor(opts: TaskWorkerOptions) {
    this.opts = opts;
    this.runningMarkMs = opts.runningMarkMs ?? 100;
    this.store = new TaskStore(opts.connection, opts.prefix, opts.maxTtlMs);
    this.completions = new CompletionBatch(this.store, {
      status: toTaskStatus('completed', { cancelRequested: false, awaitingInput: false }),
      statusMessage: 'completed',
    });
    // Two declared parameters: BullMQ makes an AbortController per job only for processors that
    // declare a third; runs are stopped through `RunControl` instead.
    const processor = (job: Job, token?: string) => this.process(job, token);
    const types = opts.types ?? [...opts.catalog.keys()];
    for (const type of types) {
      if (!opts.catalog.has(type)) throw new Error(`Unknown job type in worker types: ${type}`);
    }
    const queueNames = new Set(types.map((t) => queueNameFor(opts.catalog.get(t) ?? {})));
    this.workers = [...queueNames].map((name) => {
      const worker = new Worker(name, processor, {
        connection: opts.connection,
        prefix: opts.prefix,
        concurrency: opts.concurrency,
        ...(opts.lockDurationMs ? { lockDuration: opts.lockDurationMs } : {}),
        ...(opts.stalledIntervalMs ? { stalledInterval: opts.stalledIntervalMs } : {}),
        maxStalledCount: opts.maxStalledCount ?? 3,
        autorun: false,
      });
      worker.on('error', (err) => opts.logger.warn({ err, queue: name }, 'worker error'));
      worker.on('failed', (job, err) => void this.onFailed(job, err));
      return worker;
    });
  }

  /** Names of the queues this process consumes. */
  get queueNames(): string[] {
    return this.workers.map((w) => w.name);
  }

  /** Subscribes to cancel broadcasts, then starts taking jobs. */
  async start(): Promise<void> {
    const channel = this.store.keys.cancelChannel;
    this.opts.subscriber.on('message', (ch: string, taskId: string) => {
      if (ch !== channel) return;
      const run = this.running.get(taskId);
      if (run) {
        run.abort(new Error('cancelled'));
        this.opts.logger.info({ taskId }, 'cancel: aborted running handler');
      } else {
        this.rememberCancel(taskId);
        this.opts.logger.debug?.({ taskId }, 'cancel: remembered for a job not running here');
      }
    });
    await this.opts.subscriber.subscribe(channel);
    for (const worker of this.workers) void worker.run();
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
  }

  /** Stops taking jobs and waits for running ones to finish; `force` abandons them to stall recovery. */
  async close(force = false): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close(force)));
  }

  private async process(job: Job, token?: string): Promise<void> {
    const started = Date.now();
    const taskId = job.id ?? '';
    if (this.cancelledLately.has(taskId)) {
      this.skipped(job, started, 'cancelled before it started');
      return;
    }
    const data = (job.data ?? {}) as TaskJobData;
    // A first run of a job that carries its input needs nothing from the record: the task is
    // `working` and the completion script refuses to touch it if it was cancelled meanwhile.
    // Every other run (retry, stalled re-run, resumed after input, old job) reads the record in
    // the script that checks it is still to be done and marks it running.
    const fast =
      this.runningMarkMs > 0 &&
      data.input !== undefined &&
      data.expiresAt !== undefined &&
      job.attemptsMade === 0 &&
      (job.attemptsStarted ?? 1) <= 1;
    let task: RunTask | null;
    if (fast) {
      task =
        data.expiresAt! > started
          ? {
              id: taskId,
              type: job.name,
              input: data.input!,
              inputs: [],
              inputsRead: false,
              expiresAt: data.expiresAt!,
            }
          : null;
    } else {
      const record = await this.store.start(taskId, RUNNING);
      task = record && {
        id: record.id,
        type: record.type,
        input: record.input,
        inputs: record.inputs,
        inputsRead: true,
        expiresAt: record.createdAt + record.ttlMs,
      };
    }
    if (!task) {
      // Expired, forgotten, cancelled before it ran, or already finished by a run that crashed
      // before BullMQ heard of it: nothing to do.
      this.skipped(job, started, 'nothing to do');
      return;
    }
    const logger = this.opts.logger;
    const debug = logger.isLevelEnabled?.('debug') ?? true;
    const log = () => ({
      taskId,
      type: task.type,
      attempt: job.attemptsMade + 1,
      requestId: data.requestId,
    });
    if (debug) logger.debug?.(log(), 'task started');
    // A cancel broadcast stops the run, and so does a write during the run that finds the task
    // gone or finished (the first run reads nothing, so that is how it learns).
    const run = new RunControl();
    this.running.set(taskId, run);
    let ended: { outcome: RunOutcome | Promise<RunOutcome>; thrown?: Error };
    try {
      ended = await this.run(job, task, fast, token, run);
    } finally {
      if (this.running.get(taskId) === run) this.running.delete(taskId);
    }
    const { outcome, thrown } = ended;
    const finish = (outcome: RunOutcome) => {
      // One line per run at `info` would cost more CPU than the run: successes log at `debug`.
      const quiet = outcome === 'completed' || outcome === 'skipped';
      if (!quiet || debug) {
        const line = { ...log(), outcome, ms: Date.now() - started };
        if (quiet) logger.debug?.(line, 'task run ended');
        else logger.info(line, 'task run ended');
      }
      this.report(task.type, outcome, started);
    };
    if (typeof outcome === 'string') finish(outcome);
    else {
      // A completion: its answer (completed, or refused) comes after the processor returned.
      outcome.then(finish, (err: unknown) => {
        logger.error({ err, taskId }, 'could not record the completion');
        finish('failed');
      });
    }
    // BullMQ learns of failures, retries and parking by the processor throwing.
    if (thrown) throw thrown;
  }

  private skipped(job: Job, started: number, why: string): void {
    const line = { taskId: job.id, type: job.name, outcome: 'skipped', why };
    this.opts.logger.debug?.(line, 'task run ended');
    this.report(job.name, 'skipped', started);
  }

  /** Remembers a cancel for a job not running here (bounded: oldest first out after a minute). */
  private rememberCancel(taskId: string): void {
    const now = Date.now();
    for (const [id, at] of this.cancelledLately) {
      if (at > now - CANCEL_MEMORY_MS && this.cancelledLately.size < CANCEL_MEMORY_MAX) break;
      this.cancelledLately.delete(id);
    }
    this.cancelledLately.set(taskId, now);
  }

  private async run(
    job: Job,
    task: RunTask,
    markLater: boolean,
    token: string | undefined,
    run: RunControl,
  ): Promise<{ outcome: RunOutcome | Promise<RunOutcome>; thrown?: Error }> {
    const definition = this.opts.catalog.get(task.type);
    const facts = { cancelRequested: false, awaitingInput: false };
    if (!definition) {
      await this.fail(task.id, `No handler for job type "${task.type}" in this worker`);
      return {
        outcome: 'failed',
        thrown: new UnrecoverableError(`unknown job type ${task.type}`),
      };
    }
    const parsed = definition.input.safeParse(task.input);
    if (!parsed.success) {
      await this.fail(task.id, `Invalid input: ${parsed.error.message}`);
      return { outcome: 'failed', thrown: new UnrecoverableError('invalid input') };
    }
    if (run.aborted) return { outcome: 'cancelled' }; // cancelled before the handler started
    // The deferred `running` mark; the handler's own progress or input request replaces it.
    // `stopMark` says whether it was still to come.
    let mark: NodeJS.Timeout | undefined;
    const stopMark = (): boolean => {
      const pending = mark !== undefined;
      clearTimeout(mark);
      mark = undefined;
      return pending;
    };
    // A write refused because the task is gone or terminal means nobody wants this run any more.
    const stopIfGone = (outcome: TransitionOutcome) => {
      if (outcome.ok) return;
      if (outcome.reason === 'missing' || isTerminal(outcome.current)) {
        run.abort(new Error(`task ${outcome.reason === 'missing' ? 'is gone' : outcome.current}`));
      }
    };
    if (markLater) {
      mark = setTimeout(() => {
        mark = undefined;
        this.store
          .transition(task.id, RUNNING, { requiredStatus: 'working' })
          .then(stopIfGone, (err: unknown) =>
            this.opts.logger.warn({ err, taskId: task.id }, 'could not mark task running'),
          );
      }, this.runningMarkMs);
    }
    const ctx = this.context(job, task, token, run, stopMark, stopIfGone);
    let result: unknown;
    try {
      this.opts.onActiveChange?.(1);
      // A handler that throws at once, or rejects, clears the mark first all the same.
      try {
        result = await definition.handler(parsed.data, ctx);
      } finally {
        stopMark();
      }
    } catch (error) {
      if (error instanceof InputParked)
        return { outcome: 'input_required', thrown: new DelayedError() };
      if (run.aborted) return { outcome: 'cancelled' };
      const attempts = job.opts.attempts ?? 1;
      const willRetry = !(error instanceof UnrecoverableError) && job.attemptsMade + 1 < attempts;
      const message = error instanceof Error ? error.message : String(error);
      const status = toTaskStatus('failed', { ...facts, willRetry });
      await this.store.transition(task.id, {
        status,
        statusMessage: willRetry ? `attempt ${job.attemptsMade + 1} failed; retrying` : 'failed',
        ...(status === 'failed' ? { error: { message } } : {}),
      });
      if (!willRetry) return { outcome: 'failed', thrown: new UnrecoverableError(message) };
      return { outcome: 'retrying', thrown: error instanceof Error ? error : new Error(message) };
    } finally {
      this.opts.onActiveChange?.(-1);
    }
    if (run.aborted) return { outcome: 'cancelled' };
    // BullMQ may move the job to `completed` as soon as the completion is on the connection:
    // its command goes out after ours on the same connection, so Redis completes the record
    // first, and the two travel in one write (decision 19) instead of two round trips in a row.
    const completion = this.completions.complete(task.id, result ?? null);
    await completion.written;
    return {
      outcome: completion.outcome.then((done) =>
        done.ok ? 'completed' : done.reason === 'missing' ? 'skipped' : 'cancelled',
      ),
    };
  }

  private context(
    job: Job,
    task: RunTask,
    token: string | undefined,
    run: RunControl,
    stopMark: () => boolean,
    stopIfGone: (outcome: TransitionOutcome) => void,
  ): JobContext {
    let asked = 0;
    return {
      taskId: task.id,
      attempt: job.attemptsMade + 1,
      get signal() {
        return run.signal;
      },
      progress: async (value, message) => {
        // Progress before the running mark says `running` itself, unless it has a message.
        const markPending = stopMark();
        const statusMessage = message ?? (markPending ? RUNNING.statusMessage : undefined);
        stopIfGone(
          await this.store.transition(task.id, {
            progress: value,
            ...(statusMessage === undefined ? {} : { statusMessage }),
          }),
        );
      },
      requestInput: async ({ message, schema }) => {
        stopMark();
        const index = asked++;
        if (!task.inputsRead) {
          // A first run took its task from the job: read the answers before asking (a job may
          // have been re-added for a task that has some).
          const record = await this.store.get(task.id);
          if (!record) {
            stopIfGone({ ok: false, reason: 'missing' });
            throw new Error('task is gone'); // aborted: the run ends as cancelled
          }
          task.inputs = record.inputs;
          task.inputsRead = true;
        }
        if (index < task.inputs.length) return schema.parse(task.inputs[index]);
        // Park first, then say so: once the record reads input_required the job is promotable.
        await job.moveToDelayed(task.expiresAt + 1000, token);
        await this.store.transition(task.id, {
          status: toTaskStatus('delayed', { cancelRequested: false, awaitingInput: true }),
          statusMessage: message,
          awaitingInput: true,
          inputRequest: { message, schema: z.toJSONSchema(schema) as Record<string, unknown> },
        });
        throw new InputParked();
      },
    };
  }

  private async fail(taskId: string, message: string): Promise<void> {
    await this.store.transition(taskId, {
      status: 'failed',
      statusMessage: 'failed',
      error: { message },
    });
  }

  /** A job BullMQ failed without our processor deciding it (e.g. it stalled too often). */
  private async onFailed(job: Job | undefined, err: Error): Promise<void> {
    if (!job?.id || !/stalled/i.test(err.message)) return;
    try {
      await this.fail(job.id, `Worker lost the job too many times: ${err.message}`);
    } catch (error) {
      this.opts.logger.error({ err: error, taskId: job.id }, 'could not record stalled failure');
    }
  }

  private report(type: string, outcome: RunOutcome, started: number): void {
    this.opts.onRun?.(type, outcome, Date.now() - started);
  }
}
