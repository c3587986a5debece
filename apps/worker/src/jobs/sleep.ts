import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineJobType } from '@longrun/worker';

/** Waits `ms`, reporting progress about once a second; a cancel stops it at once. */
export const sleepJob = defineJobType({
  name: 'sleep',
  // Long-running: a queue of its own so a burst of sleeps never delays quick jobs.
  queue: 'slow',
  input: z
    .strictObject({ ms: z.int().min(0).max(3_600_000) })
    .describe(
      'Waits `ms` milliseconds, reporting progress about once a second; a cancel stops it.',
    ),
  async handler({ ms }, ctx) {
    const step = Math.max(Math.min(1000, ms), 1);
    let slept = 0;
    while (slept < ms) {
      const chunk = Math.min(step, ms - slept);
      await sleep(chunk, undefined, { signal: ctx.signal }); // rejects the moment it is aborted
      slept += chunk;
      if (slept < ms)
        await ctx.progress(Math.floor((slept / ms) * 100), `slept ${slept} of ${ms} ms`);
    }
    return { sleptMs: ms };
  },
});
