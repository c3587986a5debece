import type { Worker } from 'bullmq';
import { TurnBatch } from '../turn-batch.js';

interface Renewal {
  jobId: string;
  token: string;
}

/**
 * Lease locks checked and renewed together: the renewals asked for during one turn (a lease
 * call's completions, decision 68) go out as one BullMQ `extendLocks` script call (what its
 * lock manager sends for a worker's running jobs) instead of one `extendLock` each. Each lock is
 * renewed only if its token still holds it, and its job leaves the stalled set, as `extendLock`
 * does; `true` for a lock renewed.
 */
export class LockRenewals extends TurnBatch<Renewal, boolean> {
  constructor(
    private readonly worker: Worker,
    private readonly leaseMs: number,
  ) {
    super(100);
  }

  /** Renews `jobId`'s lock if `token` holds it; whether it did. */
  renew(jobId: string, token: string): Promise<boolean> {
    return this.add({ jobId, token }).outcome;
  }

  protected async send(items: Renewal[]): Promise<boolean[]> {
    const failed = new Set(
      await this.worker.extendJobLocks(
        items.map((r) => r.jobId),
        items.map((r) => r.token),
        this.leaseMs,
      ),
    );
    return items.map((r) => !failed.has(r.jobId));
  }
}
