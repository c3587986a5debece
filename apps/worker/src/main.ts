import { ConfigError, createWorker, stopOnSignals, workerOptionsFromEnv } from '@longrun/worker';
import { stockCatalog } from './conformance.js';
import { startTracing } from './tracing.js';

/** The stock worker: the SDK, configured from `LONGRUN_*`, running the example job types. */
async function main(): Promise<void> {
  // Before the worker exists: no span is made unless the OTEL_* variables ask for tracing.
  const tracing = await startTracing('longrun-worker', process.env);
  const jobs = stockCatalog(process.env);
  if (jobs.has('test_simple_text')) {
    console.warn(
      'LONGRUN_MCP_CONFORMANCE=true: serving the MCP conformance suite’s job fixtures (test_*); never in production',
    );
  }
  const worker = createWorker({ ...workerOptionsFromEnv(), jobs });
  stopOnSignals(worker, tracing?.shutdown);
  await worker.start();
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error('worker failed to start:', error);
  process.exit(1);
});
