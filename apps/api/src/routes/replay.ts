import type { IRouter, RequestHandler, Response } from 'express';
import type { TaskEngine } from '@longrun/engine';
import { jsonBody } from '../http/json-body.js';
import { failure, invalidProblem } from '../http/outcomes.js';
import { mount } from '../openapi/operation.js';
import { answerSubmit, batchItem } from './jobs.js';
import { replayJob, replayJobs } from './replay.operations.js';

/**
 * The replay routes, added to `router` before the `/v1/jobs` routes' catch-all: one task again
 * (answered as a submit), or a filtered batch (207, one entry per task). `before` (authentication,
 * limits) runs first.
 */
export function addReplayRoutes(
  router: IRouter,
  engine: TaskEngine,
  before: RequestHandler[] = [],
): void {
  const tenantOf = (res: Response) => res.locals.tenant as string;
  const requestId = (res: Response) => res.locals.requestId as string;

  mount(router, replayJobs, ...before, jsonBody(), async (req, res) => {
    const outcome = await engine.replayMany(tenantOf(res), req.body, {
      requestId: requestId(res),
    });
    if (outcome.kind === 'invalid') throw invalidProblem(outcome);
    const results = outcome.results.map(({ taskId, outcome: item }) =>
      item.kind === 'notFound'
        ? { taskId, ...problemItem(failure(item, 'read', engine.retryAfter).toJSON()) }
        : { taskId, ...batchItem(item, engine.retryAfter) },
    );
    res.status(207).json({ results });
  });

  mount<{ id: string }>(
    router,
    replayJob,
    ...before,
    jsonBody({ optional: true }),
    async (req, res) => {
      const outcome = await engine.replay(tenantOf(res), req.params.id, {
        requestId: requestId(res),
      });
      if (outcome.kind === 'notFound') throw failure(outcome, 'read', engine.retryAfter);
      answerSubmit(res, outcome, engine.retryAfter);
    },
  );
}

function problemItem(problem: Record<string, unknown>): Record<string, unknown> {
  return { status: problem.status, problem };
}
