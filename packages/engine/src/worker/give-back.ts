import { DelayedError, type Job } from 'bullmq';
import type { JobTypeRegistry } from '../registry/job-type-registry.js';
import type { TaskWorkerLogger } from './job-data.js';

/** A job given back waits this long before it is offered again, doubling per pickup (ms). */
export const GIVE_BACK_BASE_MS = 50;
/**
 * The longest wait of a job given back again and again: short, since a worker that serves it
 * competes with the ones that give it back for each offer; long enough that a type no running
 * worker serves costs each such job one move every two seconds.
 */
export const GIVE_BACK_MAX_MS = 2000;
/** A worker says it gave jobs of a type back at most once per this interval (ms). */
const GIVE_BACK_LOG_MS = 60_000;
/**
 * A job of a type a live worker serves comes back after this long plus up to as much again at
 * random (ms), however often it was given back: see `GiveBack.job`.
 */
export const GIVE_BACK_SERVED_MS = 20;
/** How long a read of which types live workers serve is used (ms). */
const LIVE_TYPES_READ_MS = 2000;

/**
 * Which job types some live worker serves, from the registry (its heartbeats), read again at most
 * every two seconds and only while jobs are given back. `served` answers from the last read
 * (`false` before the first) and starts the next one when it is stale.
 */
export class LiveTypes {
  private served_ = new Set<string>();
  private readAt = -Infinity;
  private reading: Promise<void> | undefined;

  constructor(private readonly registry: JobTypeRegistry) {}

  served(type: string): boolean {
    if (Date.now() - this.readAt > LIVE_TYPES_READ_MS && !this.reading) {
      this.reading = this.registry
        .read()
        .then((types) => {
          const live = new Set<string>();
          for (const [name, t] of types) if (t.versions.some((v) => v.workers > 0)) live.add(name);
          this.served_ = live;
          this.readAt = Date.now();
        })
        .catch(() => undefined)
        .finally(() => (this.reading = undefined));
    }
    return this.served_.has(type);
  }
}

/**
 * Hands jobs of types this process does not serve back to their queue, and says so in the log
 * (at most once a minute per type).
 */
export class GiveBack {
  /** Per type given back: when it was last logged, and how many since. */
  private readonly givenBack = new Map<string, { loggedAt: number; count: number }>();

  constructor(
    private readonly served: ReadonlySet<string>,
    private readonly logger: TaskWorkerLogger,
    private readonly live?: LiveTypes | undefined,
  ) {}

  /**
   * Gives a job of a type this process does not serve back to its queue, untouched: delayed
   * briefly, its attempts not counted, its task not read or changed. The worker that serves it
   * takes it when it is due. Throws BullMQ's `DelayedError`, which tells it the job was moved.
   *
   * A type a live worker serves comes back after a short random delay, each time: when it is
   * due, every idle worker of the queue wakes at the same moment, and Redis answers their
   * timed-out waits in a fixed order (by connection), so with a delay of its own each time the
   * same worker (this one) could win every time and the job never reach the worker that serves
   * it (tests/worker-routing.test.ts, two services naming one queue). A type no live worker
   * serves waits longer each time it comes back (up to 2 s), so it costs little.
   */
  async job(job: Job, token: string | undefined): Promise<never> {
    const pickups = Math.max(1, job.attemptsStarted ?? 1);
    const delay = this.live?.served(job.name)
      ? GIVE_BACK_SERVED_MS + Math.floor(Math.random() * GIVE_BACK_SERVED_MS * 4)
      : Math.min(GIVE_BACK_MAX_MS, GIVE_BACK_BASE_MS * 2 ** Math.min(pickups - 1, 8));
    await job.moveToDelayed(Date.now() + delay, token);
    const now = Date.now();
    const seen = this.givenBack.get(job.name) ?? { loggedAt: 0, count: 0 };
    seen.count += 1;
    if (now - seen.loggedAt >= GIVE_BACK_LOG_MS) {
      this.logger.warn(
        { type: job.name, queue: job.queueName, given: seen.count, serves: [...this.served] },
        'gave back jobs of a type this worker does not serve (another worker serves it, or will)',
      );
      seen.loggedAt = now;
      seen.count = 0;
    }
    this.givenBack.set(job.name, seen);
    throw new DelayedError();
  }
}
