import { fieldErrors, Problem } from '@longrun/core';
import type { FinishOutcome } from '@longrun/engine';
import type { ZodError } from 'zod';
import { leaseProblem } from '../http/outcomes.js';

/** A finish that did not end the run, as its problem. */
export function finishProblem(outcome: Exclude<FinishOutcome, { kind: 'ok' }>): Problem {
  if (outcome.kind === 'badSchema') {
    return invalid('The answer schema cannot be used', [
      { path: 'schema', message: outcome.message },
    ]);
  }
  return leaseProblem(outcome);
}

/** `body` as `schema` reads it, or a `400` listing what is wrong. */
export function parse<T>(
  schema: {
    safeParse(v: unknown): { success: true; data: T } | { success: false; error: ZodError };
  },
  body: unknown,
): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw invalid('The body is invalid', fieldErrors(parsed.error));
  return parsed.data;
}

export function invalid(detail: string, errors: { path: string; message: string }[]): Problem {
  return new Problem({
    status: 400,
    title: 'Bad Request',
    detail,
    code: 'invalid-request',
    errors,
  });
}

/** A job type another worker key (or SDK workers) owns (issue 41): `409` to a PUT, else `403`. */
export function typeOwned(name: string, status: 403 | 409): Problem {
  return new Problem({
    status,
    title: 'Job type owned',
    detail: `The job type "${name}" belongs to another worker key or to SDK workers`,
    code: 'job-type-owned',
  });
}

/** A type outside the list of the worker key's `LONGRUN_WORKER_KEYS` entry (issue 41). */
export function notAllowed(name: string): Problem {
  return new Problem({
    status: 403,
    title: 'Job type not allowed',
    detail: `This worker key may not register "${name}": its LONGRUN_WORKER_KEYS entry lists the types it may`,
    code: 'job-type-not-allowed',
  });
}
