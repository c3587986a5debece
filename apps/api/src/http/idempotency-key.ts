import type { Request } from 'express';
import { fieldErrors, idempotencyKeySchema, Problem } from '@longrun/core';

/**
 * The request's `Idempotency-Key` header (a task submit's, a schedule create's), checked;
 * `undefined` when there is none, a `400` problem when it is malformed.
 */
export function idempotencyKey(req: Request): string | undefined {
  const raw = req.headers['idempotency-key'];
  if (raw === undefined) return undefined;
  const parsed = idempotencyKeySchema.safeParse(raw);
  if (!parsed.success) {
    throw new Problem({
      status: 400,
      title: 'Bad Request',
      detail: 'Invalid Idempotency-Key header',
      code: 'invalid-request',
      errors: fieldErrors(parsed.error, 'Idempotency-Key'),
    });
  }
  return parsed.data;
}
