import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DeliveryOutcome, RunOutcome } from '@longrun/queue';

/** The worker's Prometheus metrics, on a registry of its own. */
export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly processed: Counter<'type' | 'outcome'>;
  private readonly duration: Histogram<'type'>;
  private readonly active: Gauge;
  private readonly deliveries: Counter<'outcome'>;

  constructor(concurrency: number) {
    collectDefaultMetrics({ register: this.registry });
    this.processed = new Counter({
      name: 'longrun_jobs_processed_total',
      help: 'Job runs by type and outcome (completed, failed, retrying, cancelled, input_required, skipped)',
      labelNames: ['type', 'outcome'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'longrun_job_duration_seconds',
      help: 'Duration of one job run, by type',
      labelNames: ['type'],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600],
      registers: [this.registry],
    });
    this.active = new Gauge({
      name: 'longrun_worker_active_jobs',
      help: 'Handlers running in this worker process now',
      registers: [this.registry],
    });
    this.deliveries = new Counter({
      name: 'longrun_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (delivered, retrying, failed, dropped)',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    new Gauge({
      name: 'longrun_worker_concurrency',
      help: 'Jobs this worker process may run at once',
      registers: [this.registry],
    }).set(concurrency);
  }

  onRun = (type: string, outcome: RunOutcome, durationMs: number): void => {
    this.processed.inc({ type, outcome });
    this.duration.observe({ type }, durationMs / 1000);
  };

  onDelivery = (outcome: DeliveryOutcome): void => {
    this.deliveries.inc({ outcome });
  };

  onActiveChange = (delta: 1 | -1): void => {
    this.active.inc(delta);
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
