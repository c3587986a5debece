import type { IRouter, Request, RequestHandler, Response } from 'express';
import type { TaskEngine } from '@longrun/engine';
import { jsonBody } from '../http/json-body.js';
import { waitpointProblem } from '../http/outcomes.js';
import { mount } from '../openapi/operation.js';
import { completeWaitpoint } from './waitpoints.operations.js';

/**
 * `POST /v1/waitpoints/{id}` (issue 29): completes a durable task's waitpoint with `{data}`, once;
 * another tenant's waitpoint answers 404, as a missing one does.
 */
export function addWaitpointRoutes(
  router: IRouter,
  engine: TaskEngine,
  before: RequestHandler[] = [],
): void {
  mount<{ id: string }>(
    router,
    completeWaitpoint,
    ...before,
    jsonBody(),
    async (req: Request<{ id: string }>, res: Response) => {
      const tenant = res.locals.tenant as string;
      const outcome = await engine.durable.completeWaitpoint(tenant, req.params.id, req.body);
      if (outcome.kind !== 'completed') throw waitpointProblem(outcome);
      res.json({ waitpointId: req.params.id, taskId: outcome.taskId, status: 'completed' });
    },
  );
}
