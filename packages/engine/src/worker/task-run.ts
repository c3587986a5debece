import type { Span } from '@opentelemetry/api';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { DurableTaskError, isTerminal, type JobCatalog } from '@longrun/core';
import type { DurableStore } from '../durable-store.js';
import { FATAL_DURABLE_CODES, type DurableRun } from './durable-context.js';
import { DEFAULT_EXPIRED_GRACE_MS, EXPIRY_WAKE_MS } from './expiry.js';
import { FinalDurableError } from './step-refusal.js';
import type { DurableHost } from './durable-host.js';
import type { CompletionBatch, CompletionSink } from '../completion-batch.js';
import type { TaskStore, TransitionOutcome } from '../task-store.js';
import type { FaultHooks } from '../fault-hooks.js';
import { createJobContext } from './job-context.js';
import type { RunOutcome, RunTask } from './job-data.js';
import type { MarkClock } from './mark-clock.js';
import { checkResult } from './result-check.js';
import { recordRunFailure } from './run-failure.js';
import { InputParked, parkedBy, RunControl, RunParked, RunTimedOut } from './run-control.js';

/** What every run of a worker shares. */

/** A run's limits from its worker's options, with their defaults (2 MiB results, 1 000 steps). */
export function runLimits(opts: {
  maxResultBytes?: number | undefined;
  maxSteps?: number | undefined;
}): { maxResultBytes: number; maxSteps: number } {
  return {
    maxResultBytes: opts.maxResultBytes ?? 2 * 1024 * 1024,
    maxSteps: opts.maxSteps ?? 1000,
  };
}
export interface RunDeps {
  store: TaskStore;
  /** Durable steps' writes (issue 29). */
  durable: DurableStore;
  /** Child tasks (issue 29); none: `ctx.runTask(s)` fails the task. */
  host?: DurableHost | undefined;
  completions: CompletionBatch;
  catalog: JobCatalog;
  /** The deferred `running` marks (`TaskWorkerOptions.runningMarkMs`), one timer for all runs. */
  marks: MarkClock;
  /** A result whose JSON is longer fails the task (`result-too-large`); 0: no cap. */
  maxResultBytes: number;
  /** The most `ctx.step` calls a task records (LONGRUN_MAX_STEPS; 0: no cap; unset: 1 000). */
  maxSteps?: number | undefined;
  /** The workers' BullMQ `lockDuration`: a failed run checks that it still holds its job. */
  lockDurationMs: number;
  /** How long a task that ends `expired` stays readable (`LONGRUN_EXPIRED_GRACE_MS`; 10 min). */
  expiredGraceMs?: number | undefined;
  onActiveChange?: ((delta: 1 | -1) => void) | undefined;
  logWarn(obj: object, msg: string): void;
  /** Test seam (`FaultHooks.afterPark`): none in production. */
  faults?: FaultHooks | undefined;
  /**
   * A run whose execute said `completing` hears here how its completion ended, once Redis
   * answered (after the processor returned): `error` when the call failed.
   */
  completed(run: TaskRun, outcome: RunOutcome, error?: unknown): void;
}

/**
 * How a run ended: its outcome, or `completing` (its completion is written and its outcome comes
 * to `RunDeps.completed` once Redis answers, after the processor has returned), and what the
 * processor throws so that BullMQ retries, fails or parks the job.
 */
export interface RunEnd {
  outcome: RunOutcome | 'completing';
  thrown?: Error;
}

const COMPLETING: RunEnd = { outcome: 'completing' };

/**
 * One run of a task's handler: checks its input, runs it with a context, and records how it
 * ended as a lifecycle event (guarded, so a cancelled task never becomes completed).
 */
export class TaskRun implements DurableRun, CompletionSink {
  readonly control = new RunControl();
  /** The deferred `running` mark's ticket in `RunDeps.marks`, while it is still to be written. */
  private markTicket = -1;
  /** When the run started (ms), for its duration; set by the worker. */
  started = 0;
  /** The run's span when traced (decision 65); set by the worker. */
  span: Span | undefined;
  /**
   * Which attempt this run is (1 for the first), read as it starts: BullMQ counts the attempt
   * (`job.attemptsMade`) once the run has ended, before a completion's answer comes back.
   */
  readonly attempt: number;

  constructor(
    private readonly deps: RunDeps,
    readonly job: Job,
    readonly task: RunTask,
    /** A first run: the task is marked `running` only once it has run for a while. */
    private readonly markLater: boolean,
    readonly token: string | undefined,
  ) {
    this.attempt = job.attemptsMade + 1;
  }

  get store(): TaskStore {
    return this.deps.store;
  }

  get durable(): DurableStore {
    return this.deps.durable;
  }

  get host(): DurableHost | undefined {
    return this.deps.host;
  }

  get maxResultBytes(): number {
    return this.deps.maxResultBytes;
  }

  get maxSteps(): number {
    return this.deps.maxSteps ?? 1000;
  }

  get faults(): FaultHooks | undefined {
    return this.deps.faults;
  }

  get expiredGraceMs(): number {
    return this.deps.expiredGraceMs ?? DEFAULT_EXPIRED_GRACE_MS;
  }

  async execute(): Promise<RunEnd> {
    const definition = this.deps.catalog.get(this.task.type);
    if (!definition) {
      await this.fail(`No handler for job type "${this.task.type}" in this worker`, 'no-handler');
      return {
        outcome: 'failed',
        thrown: new UnrecoverableError(`unknown job type ${this.task.type}`),
      };
    }
    // A run that starts at the end of its task's retention (a durable wait kept the record past
    // it to end it here) fails the task `expired`, announced, instead of letting it vanish.
    if (Date.now() >= this.task.expiresAt - EXPIRY_WAKE_MS) return this.expire();
    const parsed = definition.input.safeParse(this.task.input);
    if (!parsed.success) {
      // The API checked the input against the registry's validating version; a worker of an
      // older or newer version (a rolling deploy), or a zod rule JSON Schema cannot express,
      // can still refuse it. The task fails, saying so, instead of running on input it refuses.
      await this.fail(
        `The input does not match this worker's schema for job type "${this.task.type}": ${summarize(parsed.error.issues)}`,
        'input-rejected',
      );
      return { outcome: 'failed', thrown: new UnrecoverableError('invalid input') };
    }
    if (this.control.aborted) return { outcome: 'cancelled' }; // cancelled before it started
    if (this.markLater) this.scheduleMark();
    const ctx = createJobContext(this);
    let result: unknown;
    this.deps.onActiveChange?.(1);
    try {
      // A handler that throws at once, or rejects, clears the mark first all the same.
      try {
        const work = definition.handler(parsed.data, ctx);
        const timeoutMs = this.task.timeoutMs ?? definition.timeoutMs;
        result = await (timeoutMs ? this.within(work, timeoutMs) : work);
      } finally {
        this.stopMark();
      }
    } catch (error) {
      return this.threw(error);
    } finally {
      this.deps.onActiveChange?.(-1);
    }
    // A handler that caught its park and returned: the job waits already, its result is dropped.
    const parked = parkedBy(this.control);
    if (parked) {
      this.deps.logWarn(
        { taskId: this.task.id },
        'the handler returned after its run parked (a try/catch caught the park): its result is dropped',
      );
      return this.threw(parked);
    }
    if (this.control.aborted) return { outcome: 'cancelled' };
    const checked = checkResult(result, this.deps.maxResultBytes);
    if (checked.refused) {
      const { message, code } = checked.refused;
      await this.fail(message, code);
      return { outcome: 'failed', thrown: new UnrecoverableError(message) };
    }
    // BullMQ may move the job to `completed` as soon as the completion is on the connection:
    // its command goes out after ours on the same connection, so Redis completes the record
    // first, and the two travel in one write (decision 19) instead of two round trips in a row.
    // The answer comes to `completionAnswered` (this run is the sink: no promise per job).
    await this.deps.completions.completeJson(this.task.id, checked.json, this, result ?? null);
    return COMPLETING;
  }

  completionAnswered(done: TransitionOutcome): void {
    const outcome = done.ok ? 'completed' : done.reason === 'missing' ? 'skipped' : 'cancelled';
    this.deps.completed(this, outcome);
  }

  completionFailed(error: unknown): void {
    this.deps.completed(this, 'failed', error);
  }

  /**
   * The handler's work, unless it takes longer than `ms`: then its signal aborts and the run ends
   * as timed out at once, whether or not the handler stops. What it returns later is dropped (the
   * task has failed or is being retried by then, so nothing could record it anyway).
   */
  private within<T>(work: Promise<T> | T, ms: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new RunTimedOut(ms);
        this.control.abort(error);
        reject(error);
      }, ms);
    });
    const running = Promise.resolve(work);
    running.catch(() => undefined); // a rejection after the timeout is nobody's to handle
    return Promise.race([running, late]).finally(() => clearTimeout(timer));
  }

  stopMark(): boolean {
    if (this.markTicket < 0) return false;
    this.deps.marks.cancel(this.markTicket);
    this.markTicket = -1;
    return true;
  }

  stopIfGone(outcome: TransitionOutcome): void {
    if (outcome.ok) return;
    if (outcome.reason === 'missing' || isTerminal(outcome.current)) {
      this.control.abort(
        new Error(`task ${outcome.reason === 'missing' ? 'is gone' : outcome.current}`),
      );
    }
  }

  /** The deferred `start` event; the handler's own progress or input request replaces it. */
  private scheduleMark(): void {
    this.markTicket = this.deps.marks.add(this);
  }

  /** `MarkClock`: the mark's time has come; written unless the run ended or wrote meanwhile. */
  due(): void {
    if (!this.stopMark()) return;
    this.store.transition(this.task.id, 'start', { started: true }).then(
      (outcome) => this.stopIfGone(outcome),
      (err: unknown) =>
        this.deps.logWarn({ err, taskId: this.task.id }, 'could not mark task running'),
    );
  }

  /** The handler threw: park, retry or fail, as the error and the attempts left say. */
  private async threw(error: unknown): Promise<RunEnd> {
    // Parked first, whatever came after (a handler's catch, a timeout while it ran on): the
    // job is in the delayed set and the run ends as parked (issue 40).
    const parked = parkedBy(this.control);
    if (parked && parked !== error) {
      this.deps.logWarn(
        { taskId: this.task.id, err: error },
        'the handler went on after its run parked (a try/catch caught the park): what it did next is dropped',
      );
      error = parked;
    }
    if (error instanceof InputParked)
      return { outcome: 'input_required', thrown: new DelayedError() };
    if (error instanceof RunParked) return { outcome: 'waiting', thrown: new DelayedError() };
    // What stopped the run first decides, not what the handler threw: a handler that rejects on
    // its signal after a timeout timed out; a cancelled run that then passes its timeout was
    // cancelled.
    const stoppedBy = this.control.stoppedBy;
    if (stoppedBy && !(stoppedBy instanceof RunTimedOut)) return { outcome: 'cancelled' };
    if (stoppedBy) error = stoppedBy;
    const timedOut = error instanceof RunTimedOut;
    // A durable call's own error (issue 29) names its code; some fail the task at once.
    const durableCode = error instanceof DurableTaskError ? error.code : undefined;
    const fatal =
      error instanceof FinalDurableError ||
      (durableCode !== undefined && FATAL_DURABLE_CODES.has(durableCode));
    const code = timedOut ? 'timeout' : durableCode;
    // A run whose job another run holds now leaves the task to it, as BullMQ leaves the job
    // (its moveToFailed refuses a stale lock): failing or retrying the task here would end the
    // other run's work (tests/input-lost-lock.test.ts).
    if (!(await this.holdsJob())) return { outcome: 'lost', thrown: new DelayedError() };
    const end = await recordRunFailure(this.store, this.job, this.task.id, {
      message: error instanceof Error ? error.message : String(error),
      ...(code ? { code } : {}),
      timedOut,
      retryable: !(error instanceof UnrecoverableError) && !fatal,
      error: error instanceof Error ? error : undefined,
      // A traced run: the retry's span links to this one (decision 65).
      lastRunTrace: this.task.runTrace,
    });
    if (end.outcome === 'retrying') this.stopIfGone(end.transition);
    return { outcome: end.outcome, thrown: end.thrown };
  }

  /** Whether this run still holds its job's lock (renewed while checking); true when unsure. */
  private async holdsJob(): Promise<boolean> {
    if (!this.token) return true;
    try {
      return (await this.job.extendLock(this.token, this.deps.lockDurationMs)) === 1;
    } catch {
      return true;
    }
  }

  /** The task's retention ended before it finished: it fails `expired`, readable a while more. */
  private async expire(): Promise<RunEnd> {
    const message = `The task reached the end of its retention (ttlMs) at ${new Date(this.task.expiresAt).toISOString()} before it finished`;
    await this.fail(message, 'expired');
    await this.durable.keep(this.task.id, Date.now() + this.expiredGraceMs);
    return { outcome: 'failed', thrown: new UnrecoverableError(message) };
  }

  private async fail(message: string, code?: string): Promise<void> {
    await this.store.transition(this.task.id, 'fail', {
      error: code ? { message, code } : { message },
    });
  }
}

/** `input.ms: Expected number, received string; …` */
function summarize(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${['input', ...i.path.map(String)].join('.')}: ${i.message}`)
    .join('; ');
}
