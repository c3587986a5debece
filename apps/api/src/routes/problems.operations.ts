import { PROBLEM_CODES, PROBLEM_TYPES_PATH } from '@longrun/core';
import { OPEN, type Operation } from '../openapi/operation.js';
import { problem, textResponse } from '../openapi/responses.js';

export const listProblemTypes: Operation = {
  ...OPEN,
  method: 'get',
  path: PROBLEM_TYPES_PATH,
  operationId: 'listProblemTypes',
  summary: 'Every problem type: what it means and what to do',
  description:
    'One section per code, whose `id` is the code: `/problems#not-found` is the same text as `/problems/not-found`.',
  responses: { '200': textResponse('An HTML page.', 'text/html') },
};

export const getProblemType: Operation = {
  ...OPEN,
  method: 'get',
  path: `${PROBLEM_TYPES_PATH}/{code}`,
  operationId: 'getProblemType',
  summary: "One problem type (what a problem's `type` resolves to)",
  parameters: [
    {
      name: 'code',
      in: 'path',
      required: true,
      description: 'The last segment of a problem `type`.',
      schema: { type: 'string', enum: PROBLEM_CODES },
    },
  ],
  responses: {
    '200': textResponse('An HTML page with a section whose `id` is the code.', 'text/html'),
    '404': problem('No problem type has this code.'),
  },
};
