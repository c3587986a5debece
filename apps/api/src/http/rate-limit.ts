import type { NextFunction, Request, Response } from 'express';
import { Problem } from '@longrun/core';
import type { TenantLimiter } from '@longrun/engine';

/**
 * The per-tenant request limit as middleware (mount it only when the limit is > 0). Over the
 * limit: `429` + `Retry-After`.
 * @example app.use(rateLimit(engine.rateLimiter(100)))
 */
export function rateLimit(limiter: TenantLimiter) {
  return async (_req: Request, res: Response, next: NextFunction): Promise<void> => {
    const limited = await limiter.consume(res.locals.tenant as string);
    if (limited) {
      throw new Problem({
        status: 429,
        title: 'Too Many Requests',
        detail: `More than ${limiter.perSecond} requests per second for this tenant`,
        code: 'rate-limited',
        retryAfter: limited.retryAfterSeconds,
      });
    }
    next();
  };
}
