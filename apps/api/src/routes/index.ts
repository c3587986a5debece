import { Router } from 'express';
import { z } from 'zod';
import { PROBLEM_TYPES_PATH } from '@longrun/core';

/** What `GET /` answers: where to go from the root (the OpenAPI document describes it too). */
export const apiIndexSchema = z.object({
  name: z.literal('longrun'),
  links: z
    .object({
      docs: z.literal('/docs').describe('The API reference, for people'),
      openapi: z.literal('/openapi.json').describe('The OpenAPI 3.1 document'),
      jobs: z.literal('/v1/jobs').describe('Submit and list tasks (bearer key)'),
      jobTypes: z.literal('/v1/job-types').describe('The job types workers serve (bearer key)'),
      schedules: z.literal('/v1/schedules').describe('Recurring tasks (bearer key)'),
      problems: z.literal(PROBLEM_TYPES_PATH).describe('What each problem type means'),
      health: z.literal('/healthz'),
    })
    .describe('Paths on this API, relative to its origin'),
});

const INDEX: z.infer<typeof apiIndexSchema> = {
  name: 'longrun',
  links: {
    docs: '/docs',
    openapi: '/openapi.json',
    jobs: '/v1/jobs',
    jobTypes: '/v1/job-types',
    schedules: '/v1/schedules',
    problems: PROBLEM_TYPES_PATH,
    health: '/healthz',
  },
};

/**
 * `GET /`: a small JSON index pointing to the docs, the document and the task routes, without a
 * key, so someone who opens the API's URL learns where to go instead of meeting a bare 404.
 * @example app.use(indexRouter()) // GET / → {name: 'longrun', links: {docs: '/docs', …}}
 */
export function indexRouter(): Router {
  const router = Router();
  router.get('/', (_req, res) => {
    res.json(INDEX);
  });
  return router;
}
