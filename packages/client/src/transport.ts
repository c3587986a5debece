import type { z } from 'zod';
import { LongrunError, LongrunNetworkError } from './errors.js';
import {
  anySignal,
  backoffDelay,
  DEFAULT_RETRY,
  delay,
  isTransientStatus,
  parseRetryAfter,
  type RetryPolicy,
} from './retry.js';

export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface TransportOptions {
  baseUrl: string | URL;
  apiKey: string;
  fetch?: FetchLike;
  retry?: Partial<RetryPolicy>;
  /** Longest one attempt may take before it counts as a network failure (default 30 s). */
  requestTimeoutMs?: number;
}

export interface RequestSpec<S extends z.ZodType | undefined> {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Retry network errors and 429/502/503/504. Only for requests that are safe to repeat. */
  retry: boolean;
  /** Schema of a 2xx body; without one the body is ignored. */
  schema?: S;
  /** Added to the request timeout (for long-polls the server holds on purpose). */
  extraTimeoutMs?: number;
}

export interface Reply<T> {
  status: number;
  headers: Headers;
  data: T;
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

/** Builds URLs, sends requests with the key, retries what is safe to retry, parses answers. */
export class Transport {
  readonly base: URL;
  readonly retry: RetryPolicy;
  private readonly fetchImpl: FetchLike;
  readonly requestTimeoutMs: number;
  private readonly apiKey: string;

  constructor(opts: TransportOptions) {
    const base = String(opts.baseUrl);
    // A trailing slash makes `new URL('v1/jobs', base)` keep any path prefix of the base.
    this.base = new URL(base.endsWith('/') ? base : `${base}/`);
    this.apiKey = opts.apiKey;
    this.fetchImpl = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
  }

  url(path: string, query: Record<string, string | number | undefined> = {}): URL {
    const url = new URL(path.replace(/^\//, ''), this.base);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { accept: 'application/json', authorization: `Bearer ${this.apiKey}`, ...extra };
  }

  /**
   * Sends `fetch` with the caller's signal and a timeout over the whole exchange (`null`: none).
   * Failures other than the caller's abort become {@link LongrunNetworkError}s.
   */
  async fetch(
    url: URL,
    init: RequestInit,
    signal?: AbortSignal,
    timeoutMs: number | null = this.requestTimeoutMs,
  ): Promise<Response> {
    const timeout = timeoutMs === null ? undefined : AbortSignal.timeout(timeoutMs);
    try {
      return await this.fetchImpl(url, { ...init, signal: anySignal(signal, timeout) });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw new LongrunNetworkError(url.origin + url.pathname, error);
    }
  }

  /**
   * One API call: 2xx bodies are parsed with `spec.schema`; errors become {@link LongrunError}s.
   * With `spec.retry`, failures that did not reach a handler are retried with backoff, honouring
   * `Retry-After`.
   */
  async request<S extends z.ZodType | undefined>(spec: RequestSpec<S>): Promise<Reply<Parsed<S>>> {
    const url = this.url(spec.path, spec.query);
    const init: RequestInit = { method: spec.method, headers: this.headers(spec.headers) };
    if (spec.body !== undefined) {
      init.body = JSON.stringify(spec.body);
      init.headers = { ...init.headers, 'content-type': 'application/json' };
    }
    for (let attempt = 0; ; attempt++) {
      let error: LongrunError;
      try {
        const timeoutMs = this.requestTimeoutMs + (spec.extraTimeoutMs ?? 0);
        const res = await this.fetch(url, init, spec.signal, timeoutMs);
        if (res.ok)
          return (await this.parse(res, spec.schema, url, spec.signal)) as Reply<Parsed<S>>;
        error = await errorFrom(res);
        if (!isTransientStatus(res.status)) throw error;
      } catch (caught) {
        if (!(caught instanceof LongrunNetworkError)) throw caught;
        error = caught;
      }
      if (!spec.retry || attempt >= this.retry.retries) throw error;
      await delay(backoffDelay(attempt, this.retry, error.retryAfter), spec.signal);
    }
  }

  private async parse(
    res: Response,
    schema: z.ZodType | undefined,
    url: URL,
    signal?: AbortSignal,
  ): Promise<Reply<unknown>> {
    let text: string;
    try {
      text = await res.text();
    } catch (error) {
      // The connection broke (or timed out) while the body was arriving.
      if (signal?.aborted) throw signal.reason;
      throw new LongrunNetworkError(url.origin + url.pathname, error);
    }
    if (schema === undefined) return { status: res.status, headers: res.headers, data: undefined };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw invalidResponse(res.status, 'the body is not JSON');
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) throw invalidResponse(res.status, parsed.error.message);
    return { status: res.status, headers: res.headers, data: parsed.data };
  }
}

/** Reads an error response into a {@link LongrunError}. */
export async function errorFrom(res: Response): Promise<LongrunError> {
  const text = await res.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const retryAfter = parseRetryAfter(res.headers.get('retry-after'));
  return LongrunError.fromResponse(res.status, res.statusText, body, retryAfter);
}

export function invalidResponse(status: number, detail: string): LongrunError {
  return new LongrunError({
    status,
    type: 'urn:longrun:client:invalid-response',
    title: 'Unexpected response from the server',
    detail,
  });
}
