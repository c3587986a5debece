import { z } from 'zod';
import { defineJobType } from '@longrun/worker';

/** Returns its input at once (used by benchmarks). */
export const echoJob = defineJobType({
  name: 'echo',
  input: z.record(z.string(), z.unknown()).describe('Returns its input at once.'),
  handler: (input) => input,
});
