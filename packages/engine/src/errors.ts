/** Redis cannot be reached, is loading, read-only or too slow: the request may be retried. */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

/** Redis refused a write because `maxmemory` is reached (`noeviction`). */
export class StoreFullError extends Error {
  override name = 'StoreFullError';
}

const UNAVAILABLE = [
  /stream isn't writeable/i,
  /connection is closed/i,
  /command timed out/i,
  /max retries per request/i,
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH/,
  /^(LOADING|BUSY|MISCONF|READONLY|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|NOREPLICAS)\b/,
  /connection closed/i,
  /cluster isn't ready/i,
  /none of the sentinels are available|failed to refresh slots cache/i,
];

/**
 * Maps an error thrown by ioredis or BullMQ to a store error when it says Redis is away or full;
 * anything else (a bug) is returned as it is.
 */
export function classifyRedisError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  if (error instanceof StoreUnavailableError || error instanceof StoreFullError) return error;
  if (/^OOM\b/.test(error.message)) return new StoreFullError(error.message, { cause: error });
  if (UNAVAILABLE.some((re) => re.test(error.message))) {
    return new StoreUnavailableError(error.message, { cause: error });
  }
  return error;
}

/**
 * Runs a Redis operation with a deadline, turning Redis failures into store errors.
 * @example await guard(() => redis.get('k'), 2000)
 */
export async function guard<T>(operation: () => Promise<T>, deadlineMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreUnavailableError(`Redis did not answer within ${deadlineMs} ms`)),
      deadlineMs,
    );
  });
  try {
    return await Promise.race([operation(), deadline]);
  } catch (error) {
    throw classifyRedisError(error);
  } finally {
    clearTimeout(timer);
  }
}
