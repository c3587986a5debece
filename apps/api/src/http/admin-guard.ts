import type { NextFunction, Request, Response } from 'express';
import { Problem } from '@longrun/core';

/**
 * What the queue dashboard's page may load: its own scripts, styles, images and API only.
 * bull-board's page styles elements inline (`style=` and a `<style>` block) and sets a `<base>`,
 * so styles allow `'unsafe-inline'` and `base-uri` is `'self'`; its scripts are all files of its
 * own (no inline script runs: the config block is `application/json`). No web font is loaded,
 * from elsewhere or from here (`font-src 'none'`, issue 30): the page uses the system's fonts,
 * and the dashboard works offline.
 */
export const ADMIN_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'none'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Headers for every answer under `/admin` (the 401 too): no framing (clickjacking the dashboard's
 * buttons), the CSP above, no MIME sniffing, no referrer leaking job ids to other sites.
 */
export function adminHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', ADMIN_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses a write (any method but GET, HEAD, OPTIONS) a browser sends on another site's behalf:
 * the dashboard takes HTTP Basic, which a browser caches and attaches to a form another site
 * posts, so without this a page elsewhere could add, retry or clean jobs with the operator's
 * credentials (when `LONGRUN_ADMIN_READ_ONLY=false`). A browser says where a request comes from
 * in `Sec-Fetch-Site` (all current ones); older ones send `Origin` with every cross-origin POST,
 * which must then name this host. A script that is not a browser sends neither and is let
 * through: it holds the key itself, nothing is ambient.
 */
export function refuseCrossSiteWrites(req: Request, _res: Response, next: NextFunction): void {
  if (SAFE_METHODS.has(req.method) || sameOrigin(req)) return next();
  throw new Problem({
    status: 403,
    title: 'Forbidden',
    detail: 'The queue dashboard takes writes from its own page only',
    code: 'cross-site-request',
  });
}

function sameOrigin(req: Request): boolean {
  const site = req.headers['sec-fetch-site'];
  // `none`: the user's own action (typed or bookmarked), never another site's.
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false; // `null` (a sandboxed or privacy-sensitive context) and anything unparsable
  }
  // Behind a proxy the browser's Origin names the public host, which the proxy forwards.
  const forwarded = req.headers['x-forwarded-host'];
  const hosts = [req.headers.host, ...(typeof forwarded === 'string' ? forwarded.split(',') : [])];
  return hosts.some((h) => h !== undefined && h.trim().toLowerCase() === host);
}
