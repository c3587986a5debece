import { randomUUID } from 'node:crypto';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';

/** A lease request waiting for a job of one of its queues. */
export interface LeaseWaiter {
  /** Takes a job (and its lock token) pulled for it; `false` if it no longer wants one. */
  offer(job: Job, token: string, puller: LeasePuller): boolean;
  /** Stops waiting now, with nothing (the API is shutting down). */
  end(): void;
}

export interface LeasePullerOptions {
  /** A worker-role connection (`maxRetriesPerRequest: null`); BullMQ duplicates it to block. */
  connection: Redis;
  /** The shard's prefix. */
  prefix: string;
  queue: string;
  /** How long a lease lasts unrenewed: the jobs' lock duration. */
  leaseMs: number;
  /** The queue's rate limit, as SDK workers of the type apply it. */
  rateLimit?: { max: number; durationMs: number } | undefined;
  maxStalledCount?: number | undefined;
  /** A job BullMQ failed on its own (stalled too often): the broker records it lost. */
  onLost(job: Job, err: Error): void;
  onError(err: Error): void;
}

/** BullMQ 6's `Worker` members that turn a finish's `fetchNext` answer into a job. */
interface WorkerInternals {
  updateDelays(rateLimitDelay?: unknown, delayUntil?: unknown): void;
  nextJobFromJobData(jobData?: unknown, jobId?: unknown, token?: string): Promise<Job | undefined>;
}

/** How long to wait when BullMQ answers at once with no job (rate limited, or just drained). */
const EMPTY_PAUSE_MS = 50;

/**
 * The lease side of one BullMQ queue of one shard: a BullMQ worker without a processor, whose
 * jobs are taken with BullMQ's manual-processing API (`getNextJob(token)`: BullMQ's own
 * `moveToActive`, so priorities — the fair-share order —, delays, the queue's global
 * concurrency and the rate limit apply as for SDK workers). Its lock duration is the lease, and
 * it runs BullMQ's stalled-job check, so a lease nobody renews puts the job back to be run again.
 *
 * Long polls wait here without a busy loop: while lease requests wait, one `getNextJob` at a time
 * blocks on the queue's marker (BullMQ's blocking `BZPOPMIN` on a connection of its own) and
 * hands the job to the oldest waiter; with nobody waiting, nothing is asked of Redis.
 */
export class LeasePuller {
  readonly worker: Worker;
  private readonly waiters: LeaseWaiter[] = [];
  private pulling = false;
  private closed = false;

  constructor(private readonly opts: LeasePullerOptions) {
    const { rateLimit } = opts;
    this.worker = new Worker(opts.queue, null, {
      connection: opts.connection,
      prefix: opts.prefix,
      autorun: false,
      lockDuration: opts.leaseMs,
      // Checked often enough that an expired lease is seen within about half a lease.
      stalledInterval: Math.max(500, Math.floor(opts.leaseMs / 2)),
      maxStalledCount: opts.maxStalledCount ?? 3,
      drainDelay: 5,
      ...(rateLimit ? { limiter: { max: rateLimit.max, duration: rateLimit.durationMs } } : {}),
    });
    this.worker.on('error', (err) => opts.onError(err));
    this.worker.on('failed', (job, err) => {
      if (job) opts.onLost(job, err);
    });
    void this.worker.startStalledCheckTimer().catch((err: unknown) => opts.onError(err as Error));
  }

  get queue(): string {
    return this.opts.queue;
  }

  /** One job now if there is one (no blocking), with the token it was locked with. */
  async takeNow(): Promise<{ job: Job; token: string } | undefined> {
    if (this.closed) return undefined;
    const token = randomUUID();
    const job = await this.worker.getNextJob(token, { block: false });
    return job ? { job, token } : undefined;
  }

  /**
   * The job BullMQ's `moveToFinished` took next in the same script (`fetchNext`), as
   * `getNextJob` would hand it out, or undefined: what BullMQ's own `Worker.handleCompleted`
   * does with that answer (its rate-limit and delay bookkeeping, then the job made from it).
   */
  async nextFrom(finished: unknown, token: string): Promise<Job | undefined> {
    if (!Array.isArray(finished) || this.closed) return undefined;
    const [jobData, jobId, rateLimitDelay, delayUntil] = finished as unknown[];
    const worker = this.worker as unknown as WorkerInternals;
    worker.updateDelays(rateLimitDelay, delayUntil);
    return (await worker.nextJobFromJobData(jobData, jobId, token)) ?? undefined;
  }

  /** Waits for a job for `waiter` (the oldest waiter gets the next job); `cancel` stops waiting. */
  wait(waiter: LeaseWaiter): () => void {
    this.waiters.push(waiter);
    if (!this.pulling) void this.pull();
    return () => {
      const at = this.waiters.indexOf(waiter);
      if (at >= 0) this.waiters.splice(at, 1);
    };
  }

  /** Gives a job taken for nobody back to the queue at once (its attempts not counted). */
  async giveBack(job: Job, token: string): Promise<void> {
    await job.moveToDelayed(Date.now(), token);
  }

  /** Ends every wait now, with nothing: long polls answer at once (the API is stopping). */
  endWaits(): void {
    for (const waiter of this.waiters.splice(0)) waiter.end();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.endWaits();
    await this.worker.close(true);
  }

  private async pull(): Promise<void> {
    this.pulling = true;
    try {
      while (this.waiters.length > 0 && !this.closed) {
        const token = randomUUID();
        const started = Date.now();
        let job: Job | undefined;
        try {
          job = await this.worker.getNextJob(token, { block: true });
        } catch (err) {
          this.opts.onError(err as Error);
          await pause(500);
          continue;
        }
        if (!job) {
          // Answered at once with nothing: rate limited (BullMQ does not block then) or drained.
          if (Date.now() - started < EMPTY_PAUSE_MS) await pause(EMPTY_PAUSE_MS);
          continue;
        }
        const taken = this.handOut(job, token);
        if (!taken)
          await this.giveBack(job, token).catch((err: unknown) => this.opts.onError(err as Error));
      }
    } finally {
      this.pulling = false;
    }
  }

  private handOut(job: Job, token: string): boolean {
    while (this.waiters.length > 0) {
      const waiter = this.waiters.shift()!;
      if (waiter.offer(job, token, this)) return true;
    }
    return false;
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The first job any of `pullers` takes within `ms`, or undefined. */
export function waitForJob(
  pullers: readonly LeasePuller[],
  ms: number,
  signal?: AbortSignal,
): Promise<{ job: Job; token: string; puller: LeasePuller } | undefined> {
  return new Promise((resolve) => {
    let done = false;
    const cancels: (() => void)[] = [];
    const finish = (value?: { job: Job; token: string; puller: LeasePuller }) => {
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      for (const cancel of cancels) cancel();
      resolve(value);
    };
    const onAbort = () => finish();
    const timer = setTimeout(finish, ms);
    signal?.addEventListener('abort', onAbort);
    const waiter = {
      offer(job: Job, token: string, puller: LeasePuller) {
        if (done) return false;
        finish({ job, token, puller });
        return true;
      },
      end: () => {
        if (!done) finish();
      },
    };
    for (const puller of pullers) cancels.push(puller.wait(waiter));
  });
}
