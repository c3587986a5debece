import { z } from 'zod';
import { defineJobType } from '@longrun/worker';

/** Fails with the given message, without retries. */
export const failJob = defineJobType({
  name: 'fail',
  input: z
    .strictObject({ message: z.string().min(1).max(10_000) })
    .describe('Fails with the given message, without retries.'),
  attempts: 1,
  // A bounded run: MCP offers it as a short tool (a plain call waits for its result).
  timeoutMs: 10_000,
  handler({ message }): never {
    throw new Error(message);
  },
});
