import { DurableTaskError, idempotencyKeySchema, type ChildTaskRequest } from '@longrun/core';

/** What a child task item may hold: a submit's fields of issue 40's item 12, and its key. */
const CHILD_FIELDS: ReadonlySet<string> = new Set([
  'type',
  'input',
  'ttlMs',
  'timeoutMs',
  'delayMs',
  'tags',
  'idempotencyKey',
]);

/**
 * A child item as the submit it becomes: its body (checked by the submit as any `POST /v1/jobs`)
 * and its idempotency key, scoped to the parent: the item's own key (`child:<parent>:key:<key>`:
 * another parent's same key is another child), else its batch and place in it.
 * @example childSubmit({ type: 'echo', input: {}, ttlMs: 60_000 }, 0, parentId, '$children:1')
 */
export function childSubmit(
  task: ChildTaskRequest,
  i: number,
  parentId: string,
  batch: string,
): { body: Record<string, unknown>; idempotencyKey: string } {
  const stray = Object.keys(task).find((k) => !CHILD_FIELDS.has(k));
  if (stray !== undefined) {
    throw invalidChild(
      i,
      task.type,
      `${stray}: not a child task field (type, input, ttlMs, timeoutMs, delayMs, tags, idempotencyKey)`,
    );
  }
  const { idempotencyKey, ...body } = task;
  if (idempotencyKey === undefined) {
    return { body, idempotencyKey: `child:${parentId}:${batch}:${i}` };
  }
  const key = idempotencyKeySchema.safeParse(idempotencyKey);
  if (!key.success) {
    throw invalidChild(
      i,
      task.type,
      `idempotencyKey: ${key.error.issues[0]?.message ?? 'invalid'}`,
    );
  }
  return { body, idempotencyKey: `child:${parentId}:key:${key.data}` };
}

/** A child a submit refuses as invalid: the parent fails at once (retrying cannot fix it). */
export function invalidChild(i: number, type: unknown, detail: string): DurableTaskError {
  return new DurableTaskError(
    'child-invalid',
    `Child task ${i} (${String(type)}) is invalid: ${detail}`,
  );
}
