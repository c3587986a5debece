import { fieldErrors, idempotencyKeySchema } from '@longrun/core';
import { z } from 'zod';
import { StoreFullError, StoreUnavailableError } from '../errors.js';
import { invalid, type Invalid, type SubmitOutcome } from './outcomes.js';
import type { SubmitOptions } from './submit.js';

/** Most tasks one batch may carry. */
export const MAX_BATCH = 100;

/** `POST /v1/jobs/batch`: each item a submit body, plus its own `idempotencyKey` if wanted. */
export const batchSubmitRequestSchema = z.strictObject({
  tasks: z.array(z.record(z.string(), z.unknown())).min(1).max(MAX_BATCH),
});

/**
 * One item's outcome: a submit's; Redis did not answer for it or was full (nothing of it is
 * known); or it failed for a reason of ours (`error`, logged by the caller).
 */
export type BatchItemOutcome =
  | SubmitOutcome
  | { kind: 'unavailable' }
  | { kind: 'storeFull' }
  | { kind: 'error'; error: unknown };

export type BatchOutcome = { kind: 'batch'; results: BatchItemOutcome[] } | Invalid;

/**
 * Submits each item on its own, as `POST /v1/jobs` would (validation, idempotency, limits), all
 * in the same turn, so their creates travel to Redis as one script call (`CreateBatch`). The
 * outcomes come back in the items' order; one item's failure, Redis' included, is its own.
 */
export async function submitBatch(
  submitter: {
    submit(tenant: string, body: unknown, opts: SubmitOptions): Promise<SubmitOutcome>;
  },
  tenant: string,
  body: unknown,
  opts: Omit<SubmitOptions, 'idempotencyKey'> = {},
): Promise<BatchOutcome> {
  const parsed = batchSubmitRequestSchema.safeParse(body);
  if (!parsed.success) {
    return invalid(400, 'The request body is invalid', fieldErrors(parsed.error));
  }
  const settled = await Promise.allSettled(
    parsed.data.tasks.map((item) => {
      const { idempotencyKey, ...submit } = item;
      const key = idempotencyKeySchema.optional().safeParse(idempotencyKey);
      if (!key.success) {
        return Promise.resolve(
          invalid(400, 'The request body is invalid', fieldErrors(key.error, 'idempotencyKey')),
        );
      }
      return submitter.submit(tenant, submit, { ...opts, idempotencyKey: key.data });
    }),
  );
  const results = settled.map((s): BatchItemOutcome => {
    if (s.status === 'fulfilled') return s.value;
    // Never the whole request: other items may be stored already, and a retry without keys
    // would store them twice.
    if (s.reason instanceof StoreUnavailableError) return { kind: 'unavailable' };
    if (s.reason instanceof StoreFullError) return { kind: 'storeFull' };
    return { kind: 'error', error: s.reason };
  });
  return { kind: 'batch', results };
}
