import { z } from 'zod';
import { defineJobType } from '@longrun/worker';

export const approvalAnswerSchema = z.strictObject({
  approved: z.boolean(),
  comment: z.string().max(10_000).optional(),
});

/** Asks a human a question; completes with their answer `{approved, comment?}`. */
export const approvalJob = defineJobType({
  name: 'approval',
  input: z
    .strictObject({ question: z.string().min(1).max(10_000) })
    .describe('Asks a human the question and completes with their answer {approved, comment?}.'),
  async handler({ question }, ctx) {
    return ctx.requestInput({ message: question, schema: approvalAnswerSchema });
  },
});
