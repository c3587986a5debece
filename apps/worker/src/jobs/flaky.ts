import { z } from 'zod';
import { defineJobType } from '@longrun/worker';

/** Fails its first `failTimes` attempts with `message`, then returns the attempt that succeeded. */
export const flakyJob = defineJobType({
  name: 'flaky',
  input: z
    .strictObject({
      failTimes: z.int().min(0).max(2),
      message: z.string().min(1).max(1000).default('flaky failure'),
    })
    .describe('Fails its first `failTimes` attempts with `message`, then returns the attempt.'),
  attempts: 3,
  backoffMs: 100,
  // A bounded run: MCP offers it as a short tool (a plain call waits for its result).
  timeoutMs: 10_000,
  handler({ failTimes, message }, ctx) {
    if (ctx.attempt <= failTimes) throw new Error(message);
    return { attempt: ctx.attempt };
  },
});
