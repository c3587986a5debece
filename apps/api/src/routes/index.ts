import { Router } from 'express';
import type { z } from 'zod';
import { PROBLEM_TYPES_PATH } from '@longrun/core';
import { mount } from '../openapi/operation.js';
import { apiIndexSchema, index } from './index.operations.js';

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
  mount(router, index, (_req, res) => {
    res.json(INDEX);
  });
  return router;
}
