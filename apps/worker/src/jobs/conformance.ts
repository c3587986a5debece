import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineJobType } from '@longrun/worker';

/**
 * The official MCP conformance suite's fixtures that are naturally jobs, served only when
 * `LONGRUN_MCP_CONFORMANCE=true` (decision 67): an MCP client calls them as tools and the door
 * runs them through the engine like any job type, so the suite exercises the real path (a
 * result in the call, a failed task as an `isError` result, progress as
 * `notifications/progress`). Bounded runs, so MCP offers them as short tools.
 */
const noInput = z.strictObject({});

export const simpleTextJob = defineJobType({
  name: 'test_simple_text',
  input: noInput.describe('Conformance fixture: answers a simple text.'),
  timeoutMs: 10_000,
  handler: () => 'This is a simple text response for testing.',
});

export const errorHandlingJob = defineJobType({
  name: 'test_error_handling',
  input: noInput.describe('Conformance fixture: always fails.'),
  attempts: 1,
  timeoutMs: 10_000,
  handler(): never {
    throw new Error('This tool intentionally returns an error for testing');
  },
});

/** Progress 0, 50 and 100 %, far enough apart that each is its own event of the task. */
export const progressJob = defineJobType({
  name: 'test_tool_with_progress',
  input: noInput.describe('Conformance fixture: reports progress 0, 50 and 100 %.'),
  timeoutMs: 10_000,
  async handler(_input, ctx) {
    for (const percent of [0, 50, 100]) {
      if (percent > 0) await sleep(250, undefined, { signal: ctx.signal });
      await ctx.progress(percent, `${percent} of 100`);
    }
    return 'Progress reported: 0, 50, 100';
  },
});

/**
 * Asks the user for a username and email (`ctx.requestInput`) and answers what they gave. Called
 * without Tasks by a client that declared elicitation, the door asks the question in the call
 * (`elicitation/create` on its stream) and answers the task with the reply.
 */
export const elicitationJob = defineJobType({
  name: 'test_elicitation',
  input: z
    .strictObject({ message: z.string().min(1).max(10_000) })
    .describe('Conformance fixture: asks the user for a username and email.'),
  timeoutMs: 10_000,
  async handler({ message }, ctx) {
    const answer = await ctx.requestInput({
      message,
      schema: z.strictObject({
        username: z.string().max(200).describe("User's response"),
        email: z.string().max(200).describe("User's email address"),
      }),
    });
    return `User response: action=accept, content=${JSON.stringify(answer)}`;
  },
});

export const conformanceJobs = [simpleTextJob, errorHandlingJob, progressJob, elicitationJob];
