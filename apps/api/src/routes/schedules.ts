import type { IRouter, RequestHandler, Response } from 'express';
import { scheduleNotFound } from '@longrun/core';
import type { TaskEngine } from '@longrun/engine';
import { idempotencyKey } from '../http/idempotency-key.js';
import { jsonBody } from '../http/json-body.js';
import { invalidProblem, scheduleProblem } from '../http/outcomes.js';
import { mount } from '../openapi/operation.js';
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  SCHEDULES_PATH,
} from './schedules.operations.js';

/**
 * The `/v1/schedules` routes: create, list, read and delete a tenant's recurring tasks. Thin, as
 * the task routes: each parses what is HTTP's, calls the engine and answers its outcome; another
 * tenant's schedule is `404` like a missing one. `before` (authentication, limits) runs first on
 * every one of them, and on any other path under `/v1/schedules` before the app's 404.
 */
export function addScheduleRoutes(
  router: IRouter,
  engine: TaskEngine,
  before: RequestHandler[] = [],
): void {
  const tenantOf = (res: Response) => res.locals.tenant as string;

  mount(router, createSchedule, ...before, jsonBody(), async (req, res) => {
    const outcome = await engine.createSchedule(tenantOf(res), req.body, {
      idempotencyKey: idempotencyKey(req),
    });
    if (outcome.kind === 'invalid') throw invalidProblem(outcome);
    if (outcome.kind !== 'created' && outcome.kind !== 'replayed') throw scheduleProblem(outcome);
    // A retried create gets the first one's answer, marked as such (as a submit does).
    if (outcome.kind === 'replayed') res.setHeader('Idempotent-Replayed', 'true');
    // A schedule id is a UUID: nothing in the path needs encoding.
    res
      .status(201)
      .setHeader('Location', `${SCHEDULES_PATH}/${outcome.schedule.scheduleId}`)
      .json(outcome.schedule);
  });

  mount(router, listSchedules, ...before, async (_req, res) => {
    const outcome = await engine.listSchedules(tenantOf(res));
    res.json({ schedules: outcome.schedules });
  });

  mount<{ id: string }>(router, getSchedule, ...before, async (req, res) => {
    const outcome = await engine.getSchedule(tenantOf(res), req.params.id);
    if (outcome.kind !== 'found') throw scheduleNotFound();
    res.json(outcome.schedule);
  });

  mount<{ id: string }>(router, deleteSchedule, ...before, async (req, res) => {
    const outcome = await engine.deleteSchedule(tenantOf(res), req.params.id);
    if (outcome.kind !== 'deleted') throw scheduleNotFound();
    res.status(204).end();
  });

  // Any other path or method under /v1/schedules: authenticated (and limited), then the 404.
  router.use(SCHEDULES_PATH, ...before);
}
