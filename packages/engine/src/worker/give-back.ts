import { DelayedError, type Job } from 'bullmq';
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
 * Hands jobs of types this process does not serve back to their queue, and says so in the log
 * (at most once a minute per type).
 */
export class GiveBack {
  /** Per type given back: when it was last logged, and how many since. */
  private readonly givenBack = new Map<string, { loggedAt: number; count: number }>();

  constructor(
    private readonly served: ReadonlySet<string>,
    private readonly logger: TaskWorkerLogger,
  ) {}

  /**
   * Gives a job of a type this process does not serve back to its queue, untouched: delayed
   * briefly (longer each time it comes back, so a type no running worker serves costs little),
   * its attempts not counted, its task not read or changed. The worker that serves it takes it
   * when it is due. Throws BullMQ's `DelayedError`, which tells it the job was moved.
   */
  async job(job: Job, token: string | undefined): Promise<never> {
    const pickups = Math.max(1, job.attemptsStarted ?? 1);
    const delay = Math.min(GIVE_BACK_MAX_MS, GIVE_BACK_BASE_MS * 2 ** Math.min(pickups - 1, 8));
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
