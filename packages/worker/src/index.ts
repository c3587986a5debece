/**
 * The longrun worker SDK: define job types in your own service and run them.
 * @example
 * import { createWorker, defineJobType, stopOnSignals } from '@longrun/worker';
 * const worker = createWorker({ redisUrl: process.env.REDIS_URL, jobs: [reportJob] });
 * await worker.start();
 * stopOnSignals(worker);
 */
export {
  ConfigError,
  createCatalog,
  defineJobType,
  type JobCatalog,
  type JobContext,
  type JobTypeDefinition,
  type Jsonified,
} from '@longrun/core';
export { describeJobType, type JobTypeDescriptor } from '@longrun/engine';
export { createWorker, stopOnSignals } from './create-worker.js';
export type { LongrunWorker } from './longrun-worker.js';
export { loadWorkerEnv, workerOptionsFromEnv, type WorkerEnv } from './env.js';
export { WorkerMetrics } from './metrics.js';
export type { WorkerOptions } from './options.js';
