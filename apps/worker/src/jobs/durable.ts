import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { ChildTaskRequest } from '@longrun/core';
import { defineJobType } from '@longrun/worker';

/**
 * A durable handler (issue 29), each part chosen by its input: `steps` steps (`s1`, `s2`, …; each
 * reports `s<i> running` as it starts, and step `holdStep` takes `holdMs`), then a sleep, a
 * question, child `echo` (or `sleep`) tasks, a waitpoint, and a last step. Steps recorded once run
 * no more: their results come back from the task's record.
 */
export const durableJob = defineJobType({
  name: 'durable',
  input: z
    .strictObject({
      steps: z.int().min(0).max(2000).default(0),
      holdStep: z.int().min(1).max(100).optional(),
      holdMs: z.int().min(0).max(600_000).default(0),
      sleepMs: z.int().min(0).max(86_400_000).optional(),
      ask: z.boolean().optional(),
      children: z.int().min(0).max(1000).optional(),
      childSleepMs: z.int().min(0).max(3_600_000).optional(),
      failOnChildFailure: z.boolean().optional(),
      /**
       * Options every child is made with (`ttlMs`, `timeoutMs`, `delayMs`, `tags`,
       * `idempotencyKey`), passed as given: the SDK checks them as a submit would.
       */
      childOptions: z.record(z.string(), z.unknown()).optional(),
      /** The children are made this many times over, one `runTasks` batch each (default 1). */
      childBatches: z.int().min(1).max(10).optional(),
      waitpointTimeoutMs: z.int().min(1).max(86_400_000).optional(),
      repeatStep: z.boolean().optional(),
      /** Steps report nothing as they start (benchmarks count only the steps' own writes). */
      quiet: z.boolean().optional(),
      bigStepBytes: z
        .int()
        .min(0)
        .max(64 * 1024 * 1024)
        .optional(),
      /** How many steps of `bigStepBytes` (`big`, `big2`, …). */
      bigSteps: z.int().min(1).max(100).default(1),
    })
    .describe(
      'A durable task: steps recorded once each, a sleep, a question, child tasks and a waitpoint, each as its input asks.',
    ),
  async handler(input, ctx) {
    const results: unknown[] = [];
    for (let i = 1; i <= input.steps; i++) {
      results.push(
        await ctx.step(`s${i}`, async () => {
          if (!input.quiet) await ctx.progress(i, `s${i} running`);
          if (input.holdStep === i && input.holdMs > 0) {
            await sleep(input.holdMs, undefined, { signal: ctx.signal });
          }
          return { step: i, at: Date.now() };
        }),
      );
    }
    if (input.repeatStep) await ctx.step('s1', () => 'again');
    for (let i = 1; input.bigStepBytes !== undefined && i <= input.bigSteps; i++) {
      await ctx.step(i === 1 ? 'big' : `big${i}`, () => 'x'.repeat(input.bigStepBytes!));
    }
    if (input.sleepMs !== undefined) await ctx.sleep(input.sleepMs);
    const answer = input.ask
      ? await ctx.requestInput({ message: 'go on?', schema: z.object({ go: z.boolean() }) })
      : undefined;
    let children: unknown[] | undefined;
    for (let batch = 1; input.children && batch <= (input.childBatches ?? 1); batch++) {
      const made = await ctx.runTasks(
        Array.from({ length: input.children }, (_, i) => ({
          ...(input.childSleepMs !== undefined
            ? { type: 'sleep', input: { ms: input.childSleepMs } }
            : { type: 'echo', input: { child: i } }),
          ...(input.childOptions as Omit<ChildTaskRequest, 'type' | 'input'> | undefined),
        })),
        { failOnChildFailure: input.failOnChildFailure ?? false },
      );
      children = batch === 1 ? made : [...children!, ...made];
    }
    let data: unknown;
    if (input.waitpointTimeoutMs !== undefined) {
      const wp = await ctx.createWaitpoint({ timeoutMs: input.waitpointTimeoutMs });
      data = await ctx.waitFor(wp);
    }
    const last = await ctx.step('last', () => ({ steps: results.length }));
    return {
      steps: results,
      last,
      ...(answer ? { answer } : {}),
      ...(children ? { children } : {}),
      ...(data !== undefined ? { data } : {}),
    };
  },
});
