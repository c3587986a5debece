import { z } from 'zod';
import { defineJobType } from '@longrun/worker';

/**
 * Returns its input at once (used by benchmarks). It takes text: an A2A message of text only
 * naming it starts it with `{ text }`.
 */
export const echoJob = defineJobType({
  name: 'echo',
  input: z.record(z.string(), z.unknown()).describe('Returns its input at once.'),
  textInput: 'text',
  handler: (input) => input,
});
