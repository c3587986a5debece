import { z } from 'zod';
import { defineJobType } from '@longrun/worker';

/** Fails with the given message, without retries. */
export const failJob = defineJobType({
  name: 'fail',
  input: z.strictObject({ message: z.string().min(1).max(10_000) }),
  attempts: 1,
  handler({ message }): never {
    throw new Error(message);
  },
});
