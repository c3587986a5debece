import type { NextFunction, Request, Response } from 'express';
import { Problem } from '@longrun/core';

/** A documented path: its template as a pattern, and the `Allow` header for it. */
interface KnownPath {
  pattern: RegExp;
  allow: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'trace'] as const;

/**
 * `405 Method Not Allowed` with `Allow` for a request whose path is one the API documents but
 * whose method is not, where Express would answer 404 (it routes by method and path together).
 * The paths and methods are the OpenAPI document's (`paths`), which tests/openapi.test.ts holds
 * equal to the routes the app serves, so the two cannot drift. `HEAD` is allowed wherever `GET`
 * is (Express answers it). Mounted just before the 404, so every route, and every router's own
 * checks (the bearer key under `/v1/jobs`, `/v1/schedules`), came first.
 * @example app.use(methodNotAllowed(document.paths)); app.use(notFound)
 */
export function methodNotAllowed(paths: Record<string, unknown>) {
  const known: KnownPath[] = Object.entries(paths).map(([template, item]) => {
    const methods = METHODS.filter((m) => typeof item === 'object' && item !== null && m in item);
    const allow = methods.flatMap((m) => (m === 'get' ? ['GET', 'HEAD'] : [m.toUpperCase()]));
    return { pattern: templatePattern(template), allow: allow.sort().join(', ') };
  });
  return (req: Request, _res: Response, next: NextFunction): void => {
    const path = known.find((k) => k.pattern.test(req.path));
    if (!path || path.allow.split(', ').includes(req.method)) return next();
    next(
      new Problem({
        status: 405,
        title: 'Method Not Allowed',
        detail: `${req.path} answers ${path.allow}, not ${req.method}`,
        code: 'method-not-allowed',
        headers: { Allow: path.allow },
      }),
    );
  };
}

/**
 * An OpenAPI path template as Express matches it: `{param}` is one segment, a trailing slash is
 * optional and letter case does not count (Express's defaults).
 * @example templatePattern('/v1/jobs/{id}').test('/v1/jobs/abc/') // true
 */
function templatePattern(template: string): RegExp {
  const body = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body.replace(/\/$/, '')}/?$`, 'i');
}
