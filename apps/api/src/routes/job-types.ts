import type { IRouter, RequestHandler } from 'express';
import { queueNameFor, type RegisteredJobType, type TaskEngine } from '@longrun/engine';
import { mount } from '../openapi/operation.js';
import { listJobTypes } from './job-types.operations.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** A registered job type as `GET /v1/job-types` shows it. */
export function jobTypeView(type: RegisteredJobType) {
  return {
    name: type.name,
    version: type.version,
    queue: queueNameFor(type),
    attempts: type.attempts,
    backoffMs: type.backoffMs,
    ...(type.timeoutMs !== undefined ? { timeoutMs: type.timeoutMs } : {}),
    ...(type.rateLimit ? { rateLimit: type.rateLimit } : {}),
    inputSchema: type.inputSchema,
    workers: type.workers,
    registeredAt: iso(type.registeredAt),
    versions: type.versions.map((v) => ({
      version: v.version,
      registeredAt: iso(v.registeredAt),
      lastSeenAt: iso(v.lastSeenAt),
      workers: v.workers,
    })),
  };
}

/**
 * `GET /v1/job-types`: the job types workers have registered, read afresh (live worker counts
 * as of now). Any tenant's key may read it: types are the deployment's, not a tenant's.
 */
export function addJobTypeRoutes(
  router: IRouter,
  engine: TaskEngine,
  before: RequestHandler[] = [],
): void {
  mount(router, listJobTypes, ...before, async (_req, res) => {
    const types = await engine.jobTypes();
    res.setHeader('Cache-Control', 'no-store');
    res.json({ jobTypes: types.map(jobTypeView) });
  });
}
