import { Counter, Histogram, type Registry } from 'prom-client';
import type { LeaseObserver, RunOutcome } from '@longrun/engine';

/** The SDK worker's run buckets (`@longrun/worker`'s `WorkerMetrics`): one dashboard for both. */
const RUN_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600];

/**
 * HTTP workers' runs on the API's `/metrics`, under the names, labels and buckets an SDK worker
 * serves them on its own (`longrun_jobs_processed_total{type,outcome}`,
 * `longrun_job_duration_seconds{type}`, `longrun_job_queue_wait_seconds{type}`): a sum over
 * the scraped processes counts every run, whichever kind of worker ran it.
 */
export class RunMetrics implements LeaseObserver {
  private readonly processed: Counter<'type' | 'outcome'>;
  private readonly duration: Histogram<'type'>;
  private readonly queueWait: Histogram<'type'>;

  constructor(registry: Registry) {
    this.processed = new Counter({
      name: 'longrun_jobs_processed_total',
      help: 'Job runs by type and outcome (completed, failed, retrying, cancelled, input_required, skipped)',
      labelNames: ['type', 'outcome'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'longrun_job_duration_seconds',
      help: 'Duration of one job run, by type',
      labelNames: ['type'],
      buckets: RUN_BUCKETS,
      registers: [registry],
    });
    this.queueWait = new Histogram({
      name: 'longrun_job_queue_wait_seconds',
      help: "Time from submit (or the end of its delay) to the start of a task's first run, by type",
      labelNames: ['type'],
      buckets: RUN_BUCKETS,
      registers: [registry],
    });
  }

  onRun(type: string, outcome: RunOutcome, durationMs: number): void {
    this.processed.inc({ type, outcome });
    this.duration.observe({ type }, durationMs / 1000);
  }

  onQueueWait(type: string, waitMs: number): void {
    this.queueWait.observe({ type }, waitMs / 1000);
  }
}
