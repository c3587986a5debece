import { problemTypeUri, type ProblemCode } from './problem-types.js';

/** One field-level complaint inside a problem document. */
export interface ProblemFieldError {
  path: string;
  message: string;
}

export interface ProblemInit {
  status: number;
  title: string;
  detail?: string;
  /**
   * A short slug with an entry in `PROBLEM_TYPES`; becomes `type: "/problems/<code>"`, the page
   * of this API that explains it.
   */
  code: ProblemCode;
  errors?: ProblemFieldError[];
  /** Seconds; sent as the `Retry-After` header. */
  retryAfter?: number;
  headers?: Record<string, string>;
  extra?: Record<string, unknown>;
}

/**
 * An error that already knows its RFC 9457 problem response. Services throw it; one handler in
 * the API turns it into `application/problem+json`.
 * @example throw new Problem({ status: 404, title: 'Task not found', code: 'not-found' })
 */
export class Problem extends Error {
  readonly status: number;
  readonly title: string;
  readonly detail: string | undefined;
  readonly code: ProblemCode;
  readonly errors: ProblemFieldError[] | undefined;
  readonly retryAfter: number | undefined;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;

  constructor(init: ProblemInit) {
    super(init.detail ?? init.title);
    this.name = 'Problem';
    this.status = init.status;
    this.title = init.title;
    this.detail = init.detail;
    this.code = init.code;
    this.errors = init.errors;
    this.retryAfter = init.retryAfter;
    this.headers = init.headers ?? {};
    this.extra = init.extra ?? {};
  }

  /** The JSON body, as RFC 9457 lays it out. */
  toJSON(instance?: string): Record<string, unknown> {
    return {
      type: problemTypeUri(this.code),
      title: this.title,
      status: this.status,
      ...(this.detail === undefined ? {} : { detail: this.detail }),
      ...(instance === undefined ? {} : { instance }),
      ...(this.errors === undefined ? {} : { errors: this.errors }),
      ...this.extra,
    };
  }
}

/** A task that does not exist, has expired, or belongs to someone else: all look the same. */
export function taskNotFound(): Problem {
  return new Problem({ status: 404, title: 'Task not found', code: 'not-found' });
}

/** A schedule that does not exist or belongs to someone else: both look the same. */
export function scheduleNotFound(): Problem {
  return new Problem({ status: 404, title: 'Schedule not found', code: 'schedule-not-found' });
}
