import { z } from 'zod';
import { ref } from '../openapi/json-schema.js';
import { OPEN, type Operation } from '../openapi/operation.js';
import { jsonResponse, textResponse } from '../openapi/responses.js';

/** The body of `GET /healthz`. */
export const healthSchema = z.object({ status: z.literal('ok') });
/** The body of `GET /readyz`, ready or not. */
export const readySchema = z.object({
  status: z.enum(['ready', 'unavailable']),
  redis: z.literal('down').optional(),
});

export const health: Operation = {
  ...OPEN,
  method: 'get',
  path: '/healthz',
  operationId: 'health',
  summary: 'The process is up',
  responses: { '200': jsonResponse('Up.', 'Health') },
};

export const ready: Operation = {
  ...OPEN,
  method: 'get',
  path: '/readyz',
  operationId: 'ready',
  summary: 'Redis answers',
  responses: {
    '200': jsonResponse('Ready.', 'Readiness'),
    '503': {
      ...jsonResponse('Redis does not answer.', 'Readiness'),
      headers: { 'Retry-After': ref('headers', 'RetryAfter') },
    },
  },
};

export const metrics: Operation = {
  ...OPEN,
  method: 'get',
  path: '/metrics',
  operationId: 'metrics',
  summary: 'Prometheus metrics',
  responses: { '200': textResponse('Prometheus text exposition format.', 'text/plain') },
};
