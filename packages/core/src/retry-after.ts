/**
 * `Retry-After` seconds for a poll interval: `ceil(ms / 1000)`, at least 1.
 * @example retryAfterSeconds(2500) // 3
 */
export function retryAfterSeconds(pollIntervalMs: number): number {
  return Math.max(1, Math.ceil(pollIntervalMs / 1000));
}
