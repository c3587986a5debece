import type { LongrunClient } from './longrun-client.js';
import type { ClientOptions } from './options.js';
import { scheduleMethods } from './schedule-requests.js';
import { taskMethods } from './task-requests.js';
import { Transport } from './transport.js';
import type { JobTypeMap } from './types.js';

export type { LongrunClient } from './longrun-client.js';
export type {
  BatchSubmitItem,
  BatchSubmitResult,
  ClientOptions,
  CreateScheduleOptions,
  ListOptions,
  RequestOptions,
  ResultOptions,
  SubmitOptions,
} from './options.js';

/**
 * Creates a client. Pass a job type map to have `submit` check type names and inputs at compile
 * time: the one `longrun types --typescript --out src/longrun-types.ts` generates from the API's
 * registered types (or `typeof` a worker's own definitions, in the same code base).
 * @example
 * import type { LongrunJobTypes } from './longrun-types.js';
 * const lr = createClient<LongrunJobTypes>({ baseUrl: 'http://localhost:3000', apiKey });
 * const { taskId } = await lr.submit('sleep', { ms: 5000 });
 * const done = await lr.wait(taskId); // done.status === 'completed', done.result
 */
export function createClient<C extends JobTypeMap = JobTypeMap>(
  options: ClientOptions,
): LongrunClient<C> {
  // One transport (its retries and timeouts) for every method.
  const transport = new Transport(options);
  return { ...taskMethods<C>(transport), ...scheduleMethods<C>(transport) };
}
