import { createCatalog } from '@longrun/core';
import { approvalJob } from './approval.js';
import { durableJob } from './durable.js';
import { echoJob } from './echo.js';
import { failJob } from './fail.js';
import { flakyJob } from './flaky.js';
import { sleepJob } from './sleep.js';

/** Every job type this deployment runs. Adding one: a file here and a line below. */
export const catalog = createCatalog([
  sleepJob,
  echoJob,
  failJob,
  flakyJob,
  approvalJob,
  durableJob,
]);

export { approvalJob, durableJob, echoJob, failJob, flakyJob, sleepJob };

/** The catalog as a type-level map, for typed clients: `createClient<typeof jobTypes>(…)`. */
export const jobTypes = {
  sleep: sleepJob,
  echo: echoJob,
  fail: failJob,
  flaky: flakyJob,
  approval: approvalJob,
  durable: durableJob,
} as const;
