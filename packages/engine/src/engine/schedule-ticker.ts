import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { SCHEDULE_QUEUE_NAME } from '../keys.js';
import type { ScheduleRecord } from '../schedule-store.js';
import type { TaskWorkerLogger } from '../worker/job-data.js';
import type { TickOutcome } from './outcomes.js';
import type { TickOptions } from './submit.js';

/** What a tick job carries: only the schedule's id (the schedule itself is read when it fires). */
export interface TickData {
  scheduleId: string;
}

export interface ScheduleTickerDeps {
  /** A worker-role connection (`createRedis(url, 'worker')`): BullMQ blocks on it. */
  connection: Redis;
  prefix: string;
  /** The schedule as stored now; `null` once deleted. */
  read(id: string): Promise<ScheduleRecord | null>;
  /** The engine's tick submit (`TaskEngine.submitTick`): no task once the schedule is gone. */
  submit(tenant: string, body: unknown, opts: TickOptions): Promise<TickOutcome>;
  noteRun(id: string, at: number, taskId: string): Promise<void>;
  noteError(id: string, at: number, message: string): Promise<void>;
  /** Removes a job scheduler whose schedule is gone (a delete that stopped half-way). */
  removeScheduler(id: string): Promise<unknown>;
  logger?: TaskWorkerLogger | undefined;
  /** Ticks turned into tasks at once by this process (default 4). */
  concurrency?: number | undefined;
}

/**
 * Turns schedule ticks into tasks: a BullMQ worker on the `schedules` queue, where each
 * schedule's job scheduler puts one job per tick. However many processes run a ticker, BullMQ
 * hands each tick job to one of them; a tick handed out again (its process died, it was retried)
 * submits with the same idempotency key, `schedule:<scheduleId>:<tick job id>`, so it finds the
 * task the first delivery made instead of making a second one (decision 32).
 */
export class ScheduleTicker {
  private worker: Worker<TickData, string> | undefined;

  constructor(private readonly deps: ScheduleTickerDeps) {}

  /**
   * Starts taking ticks. Resolves once the worker is ready if its connection is; with Redis
   * away (or still connecting) at once, and the worker takes ticks when it connects.
   */
  async start(): Promise<void> {
    if (this.worker) return;
    const { connection, prefix, logger } = this.deps;
    const worker = new Worker<TickData, string>(SCHEDULE_QUEUE_NAME, (job) => this.tick(job), {
      connection,
      prefix,
      concurrency: this.deps.concurrency ?? 4,
    });
    worker.on('error', (err) => logger?.warn({ err }, 'schedule ticker error'));
    worker.on('failed', (job, err) =>
      logger?.warn(
        { err, scheduleId: job?.data.scheduleId, tick: job?.id },
        'schedule tick failed',
      ),
    );
    this.worker = worker;
    if (connection.status === 'ready') await worker.waitUntilReady();
  }

  /** Stops taking ticks, after the ones under way. */
  async close(): Promise<void> {
    await this.worker?.close();
    this.worker = undefined;
  }

  /**
   * One tick: submits the schedule's task for the tenant, as `POST /v1/jobs` would. A refusal
   * (the input no longer matches the job type, the tenant's caps) is noted on the schedule and
   * the tick is done; a Redis failure throws, and BullMQ retries the tick. The job's return
   * value says what happened (`created <taskId>`, `refused`, `gone`).
   */
  async tick(job: Job<TickData, string>): Promise<string> {
    const { scheduleId } = job.data;
    const schedule = await this.deps.read(scheduleId);
    if (!schedule) {
      // Deleted: no task. A job scheduler still there is one a delete left behind.
      await this.deps.removeScheduler(scheduleId);
      return 'gone';
    }
    const { type, input, ttlMs, timeoutMs } = schedule.spec;
    const body = {
      type,
      input,
      ...(ttlMs !== undefined ? { ttlMs } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    };
    const outcome = await this.deps.submit(schedule.tenant, body, {
      idempotencyKey: `schedule:${scheduleId}:${job.id ?? job.name}`,
      scheduleId,
    });
    if (outcome.kind === 'scheduleGone') {
      // Deleted since it was read: the create saw it gone and made no task.
      await this.deps.removeScheduler(scheduleId);
      return 'gone';
    }
    const at = Date.now();
    if (outcome.kind === 'created' || outcome.kind === 'replayed') {
      await this.deps.noteRun(scheduleId, at, outcome.task.taskId);
      this.deps.logger?.debug?.(
        {
          scheduleId,
          taskId: outcome.task.taskId,
          tick: job.id,
          replayed: outcome.kind !== 'created',
        },
        'schedule tick made its task',
      );
      return `created ${outcome.task.taskId}`;
    }
    // The first delivery's create is still landing: retried, it finds that task.
    if (outcome.kind === 'keyInFlux') throw new Error('the tick task is being created; retry');
    const message = refusal(outcome);
    await this.deps.noteError(scheduleId, at, message);
    this.deps.logger?.warn(
      { scheduleId, tenant: schedule.tenant, tick: job.id, reason: message },
      'schedule tick made no task',
    );
    return 'refused';
  }
}

/** Why a tick's submit made no task, in a sentence for the schedule's `lastError`. */
function refusal(
  outcome: Exclude<TickOutcome, { kind: 'created' | 'replayed' | 'keyInFlux' | 'scheduleGone' }>,
): string {
  switch (outcome.kind) {
    case 'invalid': {
      const fields = outcome.errors.map((e) => `${e.path}: ${e.message}`).join('; ');
      return fields ? `${outcome.detail} (${fields})` : outcome.detail;
    }
    case 'full':
      return `the tenant has ${outcome.openTasks} unfinished tasks (the cap is ${outcome.cap})`;
    case 'overBudget':
      return `the tenant's stored tasks take ${outcome.usedBytes} of its ${outcome.maxBytes} bytes`;
    case 'keyReused':
      return 'the tick was submitted before with another body';
  }
}
