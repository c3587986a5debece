import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import {
  isTerminal,
  toTaskStatus,
  type JobCatalog,
  type JobContext,
  type TaskRecord,
} from '@longrun/core';
import { QUEUE_NAME } from './keys.js';
import { TaskStore } from './task-store.js';

/** How one run of a job ended, for metrics and logs. */
export type RunOutcome =
  'completed' | 'failed' | 'retrying' | 'cancelled' | 'input_required' | 'skipped';

export interface TaskWorkerLogger {
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
  readonly worker: Worker;
  private readonly store: TaskStore;
  private readonly opts: TaskWorkerOptions;

  constructor(opts: TaskWorkerOptions) {
    this.opts = opts;
    this.store = new TaskStore(opts.connection, opts.prefix, opts.maxTtlMs);
    // Three declared parameters: BullMQ passes an AbortSignal only to such processors.
    const processor = (job: Job, token?: string, signal?: AbortSignal) =>
      this.process(job, token, signal);
    this.worker = new Worker(QUEUE_NAME, processor, {
      connection: opts.connection,
      prefix: opts.prefix,
      concurrency: opts.concurrency,
      ...(opts.lockDurationMs ? { lockDuration: opts.lockDurationMs } : {}),
      ...(opts.stalledIntervalMs ? { stalledInterval: opts.stalledIntervalMs } : {}),
      maxStalledCount: opts.maxStalledCount ?? 3,
      autorun: false,
    });
    this.worker.on('error', (err) => opts.logger.warn({ err }, 'worker error'));
    this.worker.on('failed', (job, err) => void this.onFailed(job, err));
  }

  /** Subscribes to cancel broadcasts, then starts taking jobs. */
  async start(): Promise<void> {
    const channel = this.store.keys.cancelChannel;
    this.opts.subscriber.on('message', (ch: string, taskId: string) => {
      if (ch === channel && this.worker.cancelJob(taskId, 'cancelled')) {
        this.opts.logger.info({ taskId }, 'cancel: aborted running handler');
      }
    });
    await this.opts.subscriber.subscribe(channel);
    void this.worker.run();
    await this.worker.waitUntilReady();
  }

  /** Stops taking jobs and waits for running ones to finish; `force` abandons them to stall recovery. */
  async close(force = false): Promise<void> {
    await this.worker.close(force);
  }

  private async process(job: Job, token?: string, signal?: AbortSignal): Promise<void> {
    const started = Date.now();
    const taskId = job.id ?? '';
    const record = await this.store.get(taskId);
    if (!record || isTerminal(record.status)) {
      // Expired, forgotten, cancelled before it ran, or already finished by a run that crashed
      // before BullMQ heard of it: nothing to do.
      this.report(job.name, 'skipped', started);
      return;
    }
    const outcome = await this.run(job, record, token, signal ?? new AbortController().signal);
    this.report(record.type, outcome, started);
  }

  private async run(
    job: Job,
    record: TaskRecord,
    token: string | undefined,
    signal: AbortSignal,
  ): Promise<RunOutcome> {
    const definition = this.opts.catalog.get(record.type);
    const facts = { cancelRequested: false, awaitingInput: false };
    if (!definition) {
      await this.fail(record.id, `No handler for job type "${record.type}" in this worker`);
      throw new UnrecoverableError(`unknown job type ${record.type}`);
    }
    const parsed = definition.input.safeParse(record.input);
    if (!parsed.success) {
      await this.fail(record.id, `Invalid input: ${parsed.error.message}`);
      throw new UnrecoverableError('invalid input');
    }
    const started = await this.store.transition(record.id, {
      status: toTaskStatus('active', facts),
      statusMessage: 'running',
      awaitingInput: false,
    });
    if (!started.ok) return 'skipped';

    const ctx = this.context(job, record, token, signal);
    let result: unknown;
    try {
      this.opts.onActiveChange?.(1);
      result = await definition.handler(parsed.data, ctx);
    } catch (error) {
      if (error instanceof InputParked) throw new DelayedError();
      if (signal.aborted) return 'cancelled';
      const attempts = job.opts.attempts ?? 1;
      const willRetry = !(error instanceof UnrecoverableError) && job.attemptsMade + 1 < attempts;
      const message = error instanceof Error ? error.message : String(error);
      const status = toTaskStatus('failed', { ...facts, willRetry });
      await this.store.transition(record.id, {
        status,
        statusMessage: willRetry ? `attempt ${job.attemptsMade + 1} failed; retrying` : 'failed',
        ...(status === 'failed' ? { error: { message } } : {}),
      });
      if (!willRetry) throw new UnrecoverableError(message);
      throw error;
    } finally {
      this.opts.onActiveChange?.(-1);
    }
    if (signal.aborted) return 'cancelled';
    const done = await this.store.transition(record.id, {
      status: toTaskStatus('completed', facts),
      statusMessage: 'completed',
      result: result ?? null,
    });
    return done.ok ? 'completed' : 'cancelled';
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
