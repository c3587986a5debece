import type { IRouter, RequestHandler } from 'express';
import type { TaskEngine } from '@longrun/engine';
import { failure } from '../http/outcomes.js';
import { mount } from '../openapi/operation.js';
import { listJobSteps } from './steps.operations.js';

/**
 * `GET /v1/jobs/{id}/steps` (issue 40): a page of a durable task's steps, oldest first (the
 * handle carries only the newest 50). Another tenant's task answers 404, as a missing one does.
 */
export function addStepRoutes(
  router: IRouter,
  engine: TaskEngine,
  before: RequestHandler[] = [],
): void {
  mount<{ id: string }>(router, listJobSteps, ...before, async (req, res) => {
    const tenant = res.locals.tenant as string;
    const outcome = await engine.steps(tenant, req.params.id, req.query);
    if (outcome.kind !== 'found') throw failure(outcome, 'read', engine.retryAfter);
    res.json(outcome.page);
  });
}
