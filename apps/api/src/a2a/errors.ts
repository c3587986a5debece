import { A2AError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { Problem } from '@longrun/core';
import { StoreFullError, StoreUnavailableError } from '@longrun/engine';
import type { Logger } from 'pino';

/** The A2A error for a task the caller cannot see (missing, expired or another tenant's). */
export function notFound(id: string): Error {
  return new TaskNotFoundError(`Task not found: ${id}`);
}

/**
 * What a failed call answers: A2A errors as they are, an unreachable or full Redis as an
 * internal error saying so, anything else logged and answered without its details.
 * @example catch (err) { throw a2aFailure(err, logger) }
 */
export function a2aFailure(err: unknown, logger?: Logger): Error {
  if (err instanceof A2AError) return err;
  if (err instanceof StoreUnavailableError) {
    return new A2AError('The task store (Redis) is not answering; retry shortly');
  }
  if (err instanceof StoreFullError) return new A2AError('The task store is full; retry later');
  logger?.error({ err }, 'A2A call failed');
  return new A2AError('Internal error');
}

/** A problem as one line: its detail, then each field error. */
export function describe(problem: Problem): string {
  const detail = problem.detail ?? problem.title;
  const errors = problem.errors ?? [];
  return errors.length === 0
    ? detail
    : `${detail}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`;
}
