import { A2AError, RequestMalformedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
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

/** Which A2A binding a call came over (the errors a refusal takes differ between them). */
export type Binding = 'jsonrpc' | 'rest';

/**
 * JSON-RPC 2.0's implementation-defined server error: A2A defines no code for "try again later"
 * (its own codes are -32001 to -32009), and -32603 would say the server is broken.
 */
export const RETRY_LATER_CODE = -32000;

/** A start refused for capacity over JSON-RPC: `-32000`, the message saying when to retry. */
class JsonRpcRetryLaterError extends A2AError {
  override readonly reason = 'RESOURCE_EXHAUSTED';
  readonly transport = 'jsonrpc';
  readonly envelopeCode = RETRY_LATER_CODE;
}

/** The same over HTTP+JSON: `429` with `RESOURCE_EXHAUSTED` and `retryAfterSeconds`. */
class RestRetryLaterError extends A2AError {
  override readonly reason = 'RESOURCE_EXHAUSTED';
  readonly transport = 'rest';
  readonly statusCode = 429;
}

/**
 * What a start the engine refused answers (issue 32: never a task that then does not exist):
 * a refused input (schema, unknown type, a reused `messageId`) is invalid params naming the
 * field; a refusal for capacity (the open-task cap, the storage budget, a key in flux) is an
 * error the client may retry after `problem.retryAfter` seconds.
 */
export function refusal(problem: Problem, detail: string, binding: Binding): Error {
  if (problem.status !== 429 && problem.status !== 409) return new RequestMalformedError(detail);
  const retryAfter = problem.retryAfter ?? 1;
  const options = {
    message: `${detail}; retry in ${retryAfter} s`,
    metadata: { retryAfterSeconds: String(retryAfter), problem: problem.code },
  };
  return binding === 'rest'
    ? new RestRetryLaterError(options)
    : new JsonRpcRetryLaterError(options);
}
