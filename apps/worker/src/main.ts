import { ConfigError, createWorker, stopOnSignals, workerOptionsFromEnv } from '@longrun/worker';
import { catalog } from './jobs/index.js';

/** The stock worker: the SDK, configured from `LONGRUN_*`, running the example job types. */
async function main(): Promise<void> {
  const worker = createWorker({ ...workerOptionsFromEnv(), jobs: catalog });
  stopOnSignals(worker);
  await worker.start();
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error('worker failed to start:', error);
  process.exit(1);
});
