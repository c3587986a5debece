import {
  fieldErrors,
  isTaskId,
  stepsQuerySchema,
  stepView,
  type StepPage,
  type StepSummary,
} from '@longrun/core';
import { invalid, notFound, type Invalid, type NotFound } from './outcomes.js';
import type { ShardSet } from './shard-set.js';

/** `GET /v1/jobs/{id}/steps`'s outcome. */
export type StepsOutcome = { kind: 'found'; page: StepPage } | NotFound | Invalid;

/** The opaque cursor of the page that starts at step `n` (1, 2, …). */
function encodeStepCursor(n: number): string {
  return Buffer.from(`steps:${n}`).toString('base64url');
}

/** The step a cursor starts at, or `null` when it is not one we gave out. */
function decodeStepCursor(cursor: string): number | null {
  const match = /^steps:([1-9][0-9]{0,8})$/.exec(Buffer.from(cursor, 'base64url').toString());
  return match ? Number(match[1]) : null;
}

/**
 * A page of `tenant`'s task `id`'s steps, oldest first (issue 40): one `HMGET` of the entries
 * asked for, whatever the task's count. Another tenant's task is `notFound`, as a missing one is.
 */
export async function stepPage(
  deps: { shards: ShardSet; redis<T>(operation: () => Promise<T>): Promise<T> },
  tenant: string,
  id: string,
  query: unknown,
): Promise<StepsOutcome> {
  const parsed = stepsQuerySchema.safeParse(query);
  if (!parsed.success) return invalid(400, 'The query is invalid', fieldErrors(parsed.error));
  const { limit, cursor } = parsed.data;
  const from = cursor === undefined ? 1 : decodeStepCursor(cursor);
  if (from === null) {
    return invalid(400, 'The query is invalid', [
      { path: 'cursor', message: 'cursor must be a value returned as nextCursor' },
    ]);
  }
  if (!isTaskId(id)) return notFound;
  const read = await deps.redis(() => deps.shards.of(id).store.steps(id, from, limit));
  if (!read || read.tenant !== tenant) return notFound;
  const next = from + read.steps.length;
  return {
    kind: 'found',
    page: {
      steps: read.steps.map((s: StepSummary) => stepView(s)),
      stepCount: read.count,
      nextCursor: read.steps.length > 0 && next <= read.count ? encodeStepCursor(next) : null,
    },
  };
}
