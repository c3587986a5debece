import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { DeliveryOutcome, RunOutcome } from '@longrun/engine';
import { LeanCounter, LeanHistogram } from './lean-metrics.js';

const BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600];

/** The worker's Prometheus metrics, on a registry of its own. */
export class WorkerMetrics {
  readonly registry = new Registry();
  // Written once per job run: lean (see LeanMetric), the rest are prom-client's own.
  private readonly processed: LeanCounter;
  private readonly duration: LeanHistogram;
  private readonly queueWait: LeanHistogram;
  private readonly waitChildren = new Map<string, { observe(v: number): void }>();
  private readonly deliveries: Counter<'outcome'>;
  private readonly repairs: Counter<'repair'>;
  /** Handlers running now; read by the gauge at scrape time, not written to it per job. */
  private activeNow = 0;
  private readonly concurrency: Gauge;
  /** Labelled children by type and outcome: prom-client hashes the labels on every call otherwise. */
  private readonly runChildren = new Map<
    string,
    { processed: { inc(): void }; duration: { observe(v: number): void } }
  >();

  constructor(concurrency: number) {
    collectDefaultMetrics({ register: this.registry });
    this.processed = new LeanCounter(
      'longrun_jobs_processed_total',
      'Job runs by type and outcome (completed, failed, retrying, cancelled, input_required, skipped)',
      this.registry,
    );
    this.duration = new LeanHistogram(
      'longrun_job_duration_seconds',
      'Duration of one job run, by type',
      this.registry,
      BUCKETS,
    );
    this.queueWait = new LeanHistogram(
      'longrun_job_queue_wait_seconds',
      "Time from submit (or the end of its delay) to the start of a task's first run, by type",
      this.registry,
      BUCKETS,
    );
    const activeNow = (): number => this.activeNow;
    new Gauge({
      name: 'longrun_worker_active_jobs',
      help: 'Handlers running in this worker process now',
      registers: [this.registry],
      collect() {
        this.set(activeNow());
      },
    });
    this.deliveries = new Counter({
      name: 'longrun_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (delivered, retrying, failed, dropped)',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.repairs = new Counter({
      name: 'longrun_reconciler_repairs_total',
      help: 'Tasks the reconciler repaired, by repair (requeue, promote, jobLost)',
      labelNames: ['repair'],
      registers: [this.registry],
    });
    this.concurrency = new Gauge({
      name: 'longrun_worker_concurrency',
      help: 'Jobs this worker process may run at once',
      registers: [this.registry],
    });
    this.concurrency.set(concurrency);
  }

  /** A worker that starts serving more shards says so (its concurrency is split over them). */
  setConcurrency(concurrency: number): void {
    this.concurrency.set(concurrency);
  }

  onRun = (type: string, outcome: RunOutcome, durationMs: number): void => {
    const key = `${type}\u0000${outcome}`;
    let child = this.runChildren.get(key);
    if (!child) {
      child = {
        processed: this.processed.child({ type, outcome }),
        duration: this.duration.child({ type }),
      };
      this.runChildren.set(key, child);
    }
    child.processed.inc();
    child.duration.observe(durationMs / 1000);
  };

  onQueueWait = (type: string, waitMs: number): void => {
    let child = this.waitChildren.get(type);
    if (!child) {
      child = this.queueWait.child({ type });
      this.waitChildren.set(type, child);
    }
    child.observe(waitMs / 1000);
  };

  onDelivery = (outcome: DeliveryOutcome): void => {
    this.deliveries.inc({ outcome });
  };

  onRepair = (repair: string): void => {
    this.repairs.inc({ repair });
  };

  onActiveChange = (delta: 1 | -1): void => {
    this.activeNow += delta;
  };

  /** Serves `/metrics` and `/healthz`; resolves with the bound port. */
  async listen(port: number, host: string): Promise<{ server: Server; port: number }> {
    const server = createServer((req, res) => {
      if (req.url === '/metrics') {
        this.registry.metrics().then(
          (body) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(body),
          () => res.writeHead(500).end(),
        );
      } else if (req.url === '/healthz') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
    const address = server.address();
    return { server, port: typeof address === 'object' && address ? address.port : port };
  }
}
