import type { Operation } from '../openapi/operation.js';
import { docs, openapi } from './docs.operations.js';
import { health, metrics, ready } from './health.operations.js';
import { index } from './index.operations.js';
import { listJobTypes } from './job-types.operations.js';
import { JOB_OPERATIONS } from './jobs.operations.js';
import { getProblemType, listProblemTypes } from './problems.operations.js';
import { REPLAY_OPERATIONS } from './replay.operations.js';
import { SCHEDULE_OPERATIONS } from './schedules.operations.js';
import { STEP_OPERATIONS } from './steps.operations.js';
import { WORKER_OPERATIONS } from './worker.operations.js';
import { WAITPOINT_OPERATIONS } from './waitpoints.operations.js';

/**
 * Every operation of the HTTP API the OpenAPI document describes, in the document's order. A
 * route mounts its handlers with its operation (`mount`); tests/openapi.test.ts checks that the
 * routes the app serves are exactly these. The MCP and A2A doors are described by their own
 * protocols, not here.
 */
export const OPERATIONS: readonly Operation[] = [
  ...SCHEDULE_OPERATIONS,
  listJobTypes,
  ...JOB_OPERATIONS,
  ...STEP_OPERATIONS,
  ...REPLAY_OPERATIONS,
  ...WORKER_OPERATIONS,
  ...WAITPOINT_OPERATIONS,
  index,
  health,
  ready,
  metrics,
  openapi,
  docs,
  listProblemTypes,
  getProblemType,
];
