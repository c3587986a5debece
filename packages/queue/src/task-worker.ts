import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { toTaskStatus, type JobCatalog, type JobContext, type TaskRecord } from '@longrun/core';
import { queueNameFor } from './keys.js';
import { TaskStore } from './task-store.js';

/** How one run of a job ended, for metrics and logs. */
export type RunOutcome =
  'completed' | 'failed' | 'retrying' | 'cancelled' | 'input_required' | 'skipped';

export interface TaskWorkerLogger {
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
  private readonly opts: TaskWorkerOptions;

  constructor(opts: TaskWorkerOptions) {
    this.opts = opts;
    this.store = new TaskStore(opts.connection, opts.prefix, opts.maxTtlMs);
    // Three declared parameters: BullMQ passes an AbortSignal only to such processors.
    const processor = (job: Job, token?: string, signal?: AbortSignal) =>
      this.process(job, token, signal);
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
      if (this.workers.some((w) => w.cancelJob(taskId, 'cancelled'))) {
        this.opts.logger.info({ taskId }, 'cancel: aborted running handler');
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

  private async process(job: Job, token?: string, signal?: AbortSignal): Promise<void> {
    const started = Date.now();
    const taskId = job.id ?? '';
    // One round trip: still to be done? then mark it running and read it.
    const record = await this.store.start(taskId, {
      status: toTaskStatus('active', { cancelRequested: false, awaitingInput: false }),
      statusMessage: 'running',
      awaitingInput: false,
    });
    if (!record) {
      // Expired, forgotten, cancelled before it ran, or already finished by a run that crashed
      // before BullMQ heard of it: nothing to do.
      this.report(job.name, 'skipped', started);
      return;
    }
    const requestId = (job.data as { requestId?: string } | undefined)?.requestId;
    const log = { taskId, type: record.type, attempt: job.attemptsMade + 1, requestId };
    this.opts.logger.debug?.(log, 'task started');
    const { outcome, thrown } = await this.run(
      job,
      record,
      token,
      signal ?? new AbortController().signal,
    );
    this.opts.logger.info({ ...log, outcome, ms: Date.now() - started }, 'task run ended');
    this.report(record.type, outcome, started);
    // BullMQ learns of failures, retries and parking by the processor throwing.
    if (thrown) throw thrown;
  }

  private async run(
    job: Job,
    record: TaskRecord,
    token: string | undefined,
    signal: AbortSignal,
  ): Promise<{ outcome: RunOutcome; thrown?: Error }> {
    const definition = this.opts.catalog.get(record.type);
    const facts = { cancelRequested: false, awaitingInput: false };
    if (!definition) {
      await this.fail(record.id, `No handler for job type "${record.type}" in this worker`);
      return {
        outcome: 'failed',
        thrown: new UnrecoverableError(`unknown job type ${record.type}`),
      };
    }
    const parsed = definition.input.safeParse(record.input);
    if (!parsed.success) {
      await this.fail(record.id, `Invalid input: ${parsed.error.message}`);
      return { outcome: 'failed', thrown: new UnrecoverableError('invalid input') };
    }
    const ctx = this.context(job, record, token, signal);
    let result: unknown;
    try {
      this.opts.onActiveChange?.(1);
      result = await definition.handler(parsed.data, ctx);
    } catch (error) {
      if (error instanceof InputParked)
        return { outcome: 'input_required', thrown: new DelayedError() };
      if (signal.aborted) return { outcome: 'cancelled' };
      const attempts = job.opts.attempts ?? 1;
      const willRetry = !(error instanceof UnrecoverableError) && job.attemptsMade + 1 < attempts;
      const message = error instanceof Error ? error.message : String(error);
      const status = toTaskStatus('failed', { ...facts, willRetry });
      await this.store.transition(record.id, {
        status,
        statusMessage: willRetry ? `attempt ${job.attemptsMade + 1} failed; retrying` : 'failed',
        ...(status === 'failed' ? { error: { message } } : {}),
      });
      if (!willRetry) return { outcome: 'failed', thrown: new UnrecoverableError(message) };
      return { outcome: 'retrying', thrown: error instanceof Error ? error : new Error(message) };
    } finally {
      this.opts.onActiveChange?.(-1);
    }
    if (signal.aborted) return { outcome: 'cancelled' };
    const done = await this.store.transition(record.id, {
      status: toTaskStatus('completed', facts),
      statusMessage: 'completed',
      result: result ?? null,
    });
    return { outcome: done.ok ? 'completed' : 'cancelled' };
  }

  private context(
    job: Job,
    record: TaskRecord,
    token: string | undefined,
    signal: AbortSignal,
  ): JobContext {
    let asked = 0;
    return {
      taskId: record.id,
      attempt: job.attemptsMade + 1,
      signal,
      progress: async (value, message) => {
        await this.store.transition(record.id, {
          progress: value,
          ...(message === undefined ? {} : { statusMessage: message }),
        });
      },
      requestInput: async ({ message, schema }) => {
        const index = asked++;
        if (index < record.inputs.length) return schema.parse(record.inputs[index]);
        // Park first, then say so: once the record reads input_required the job is promotable.
        await job.moveToDelayed(record.createdAt + record.ttlMs + 1000, token);
        await this.store.transition(record.id, {
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
