import { problemSchema } from '@longrun/core';

/** One field-level complaint from a problem document: which field, and what is wrong with it. */
export interface LongrunFieldError {
  path: string;
  message: string;
}

export interface LongrunErrorInit {
  status: number;
  type: string;
  title: string;
  detail?: string;
  errors?: LongrunFieldError[];
  retryAfter?: number;
  problem?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * The API answered with an error (an RFC 9457 problem), or with something the client could not
 * read. Carries the problem's fields; `problem` holds the whole body (e.g. `taskStatus` on a 409).
 * @example
 * try { await lr.result(id) } catch (e) { if (e instanceof LongrunError && e.status === 409) … }
 */
export class LongrunError extends Error {
  /** HTTP status; `0` when no response arrived (see {@link LongrunNetworkError}). */
  readonly status: number;
  /**
   * The problem type, e.g. `/problems/not-found`: a reference relative to the API's URL, where the
   * API serves a page saying what the problem means and what to do (`GET /problems` lists them
   * all). `about:blank` when the answer was not a problem document.
   */
  readonly type: string;
  readonly title: string;
  readonly detail: string | undefined;
  /** Which fields were wrong, when the server said. */
  readonly errors: LongrunFieldError[] | undefined;
  /** Seconds the server asked us to wait before trying again (`Retry-After`). */
  readonly retryAfter: number | undefined;
  /** The whole problem body, including extension members. */
  readonly problem: Record<string, unknown>;

  constructor(init: LongrunErrorInit) {
    super(messageOf(init), init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'LongrunError';
    this.status = init.status;
    this.type = init.type;
    this.title = init.title;
    this.detail = init.detail;
    this.errors = init.errors;
    this.retryAfter = init.retryAfter;
    this.problem = init.problem ?? {};
  }

  /** The short code at the end of the problem type (`not-found`, `not-terminal`, …). */
  get code(): string {
    return this.type.slice(this.type.lastIndexOf('/') + 1);
  }

  /** Builds the error from a response's status, body and `Retry-After` (seconds). */
  static fromResponse(status: number, statusText: string, body: unknown, retryAfter?: number) {
    const parsed = problemSchema.safeParse(body);
    if (parsed.success) {
      const problem = parsed.data;
      return new LongrunError({
        status,
        type: problem.type,
        title: problem.title,
        detail: problem.detail,
        errors: problem.errors,
        retryAfter,
        problem,
      });
    }
    // Not a problem document: a proxy's error page, or a server that is not longrun.
    return new LongrunError({
      status,
      type: 'about:blank',
      title: statusText || `HTTP ${status}`,
      retryAfter,
    });
  }
}

/** Fields named in an error's message at most; `errors` keeps them all. */
const FIELDS_IN_MESSAGE = 10;

/**
 * The error's message: title and detail, then the fields the problem names, so a log line or an
 * uncaught error says what to fix without the caller reading `errors`.
 * @example messageOf({ title: 'Unprocessable Content', detail: 'The answer …', errors: [{ path: 'input.ok', message: 'must be boolean' }], … })
 * // 'Unprocessable Content: The answer … (input.ok: must be boolean)'
 */
function messageOf(init: LongrunErrorInit): string {
  const headline = init.detail ? `${init.title}: ${init.detail}` : init.title;
  const errors = init.errors ?? [];
  if (errors.length === 0) return headline;
  const named = errors.slice(0, FIELDS_IN_MESSAGE).map((e) => `${e.path}: ${e.message}`);
  if (errors.length > FIELDS_IN_MESSAGE) named.push(`${errors.length - FIELDS_IN_MESSAGE} more`);
  return `${headline} (${named.join('; ')})`;
}

/**
 * No response arrived: the connection failed or the request timed out, even after retries.
 * @example if (e instanceof LongrunNetworkError) console.error('is the API up?', e.cause)
 */
export class LongrunNetworkError extends LongrunError {
  constructor(url: string, cause: unknown) {
    const reason = describeCause(cause);
    super({
      status: 0,
      type: 'urn:longrun:client:network-error',
      title: 'Network error',
      detail: `No response from ${url}: ${reason}`,
      cause,
    });
    this.name = 'LongrunNetworkError';
  }
}

/** The innermost useful message of a fetch failure (`fetch failed` hides `ECONNREFUSED`). */
function describeCause(cause: unknown): string {
  let current: unknown = cause;
  let message = 'unknown error';
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    message = typeof code === 'string' ? `${code} (${current.message})` : current.message;
    current = current.cause;
  }
  return message;
}
