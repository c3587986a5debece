import { LongrunWorker } from './longrun-worker.js';
import type { WorkerOptions } from './options.js';

/**
 * Makes a worker for your job types, in your own service. Tasks of these types submitted to the
 * longrun API (any instance on the same Redis and prefix) run here. The options are checked now
 * (a bad one throws `ConfigError`); nothing runs until `start()`.
 * @example
 * const worker = createWorker({ redisUrl: process.env.REDIS_URL, jobs: [reportJob] });
 * await worker.start();
 * stopOnSignals(worker);
 */
export function createWorker(opts: WorkerOptions): LongrunWorker {
  return new LongrunWorker(opts);
}

/**
 * Closes the worker on SIGTERM or SIGINT and ends the process (exit 0 once drained or
 * abandoned; exit 1 if closing itself hangs past the grace period). `afterClose` runs once the
 * worker closed, before the exit: e.g. an OpenTelemetry provider's `shutdown` (the last spans).
 */
export function stopOnSignals(worker: LongrunWorker, afterClose?: () => Promise<unknown>): void {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(1), worker.shutdownGraceMs + 5000).unref();
    void worker
      .close()
      .then(afterClose)
      .catch(() => undefined)
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
