import { OPEN, type Operation } from '../openapi/operation.js';
import { textResponse } from '../openapi/responses.js';

export const openapi: Operation = {
  ...OPEN,
  method: 'get',
  path: '/openapi.json',
  operationId: 'openapi',
  summary: 'This document (OpenAPI 3.1)',
  responses: {
    '200': {
      description: 'The OpenAPI document.',
      content: { 'application/json': { schema: { type: 'object' } } },
    },
  },
};

export const docs: Operation = {
  ...OPEN,
  method: 'get',
  path: '/docs',
  operationId: 'docs',
  summary: 'Human-readable API reference rendered from this document',
  responses: { '200': textResponse('An HTML page.', 'text/html') },
};
