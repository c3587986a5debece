/** How the client retries requests that did not get through (network error, 429, 502-504). */
export interface RetryPolicy {
  /** Retries after the first attempt (0 disables retrying). */
  retries: number;
  /** First backoff delay; doubles each retry. */
  minDelayMs: number;
  /** Largest backoff delay (a longer `Retry-After` from the server still wins). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 3, minDelayMs: 250, maxDelayMs: 30_000 };

/** Statuses that mean "not handled, try again later": rate limited, or the service is degraded. */
export function isTransientStatus(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}

/**
 * `Retry-After` as seconds (it may be a number of seconds or an HTTP date); undefined if absent
 * or unreadable.
 * @example parseRetryAfter('3') // 3
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * The delay before retry number `attempt` (0-based): exponential with jitter, capped, and never
 * shorter than what the server asked for.
 * @example backoffDelay(2, DEFAULT_RETRY, 5) // 5000: the server's Retry-After wins
 */
export function backoffDelay(
  attempt: number,
  policy: Pick<RetryPolicy, 'minDelayMs' | 'maxDelayMs'>,
  retryAfterSec?: number,
): number {
  const exponential = Math.min(policy.maxDelayMs, policy.minDelayMs * 2 ** attempt);
  // Jitter in [50%, 100%], so clients that failed together do not come back together.
  const jittered = exponential * (0.5 + Math.random() / 2);
  return Math.max(jittered, (retryAfterSec ?? 0) * 1000);
}

/**
 * Resolves after `ms`, or rejects with the signal's reason as soon as it aborts.
 * @example await delay(1000, AbortSignal.timeout(500)) // rejects with a TimeoutError
 */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Combines optional signals into one (undefined when there is none). */
export function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}
