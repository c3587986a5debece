import { ConfigError, createWorker, stopOnSignals, workerOptionsFromEnv } from '@longrun/worker';
import { stockCatalog } from './conformance.js';
import { startTracing } from './tracing.js';

/** The stock worker: the SDK, configured from `LONGRUN_*`, running the example job types. */
async function main(): Promise<void> {
  // Before the worker exists: no span is made unless the OTEL_* variables ask for tracing.
  const tracing = await startTracing('longrun-worker', process.env);
  const worker = createWorker({ ...workerOptionsFromEnv(), jobs: stockCatalog(process.env) });
  stopOnSignals(worker, tracing?.shutdown);
  await worker.start();
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error('worker failed to start:', error);
  process.exit(1);
});
