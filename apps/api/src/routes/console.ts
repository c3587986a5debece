import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Router, type Response } from 'express';

/** Where the console's page lives. */
export const CONSOLE_PATH = '/console';

/** The console's files (`apps/api/console/`), plain ES modules and CSS: no build step. */
const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

/** Each file the page loads, and its type; nothing else in the folder is served. */
const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'api.js': 'text/javascript; charset=utf-8',
  'dom.js': 'text/javascript; charset=utf-8',
  'list.js': 'text/javascript; charset=utf-8',
  'task.js': 'text/javascript; charset=utf-8',
  'form.js': 'text/javascript; charset=utf-8',
  'validate.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

/**
 * Everything from this origin and nothing inline: no CDN, no web fonts (`font-src 'none'`: the
 * system's), no framing, no form posted anywhere (the page sends its requests with `fetch`,
 * the tenant's key in the `Authorization` header, never in a URL or a cookie).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'none'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The task console at `/console/`: static files read once at start-up, served with a strict CSP.
 * Mounted with `router.use` (files, not API operations: the OpenAPI document does not list them).
 * @example app.use(consoleRouter())
 */
export function consoleRouter(): Router {
  const files = new Map(
    Object.entries(FILES).map(([name, type]) => [
      name,
      { type, body: readFileSync(`${CONSOLE_DIR}${name}`) },
    ]),
  );
  const router = Router();
  // The site's icon where browsers look for it first (a 404 there fills every browser console).
  router.use('/favicon.ico', (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const icon = files.get('favicon.svg')!;
    res.setHeader('Cache-Control', 'public, max-age=86400');
    send(res, icon.type, icon.body, false);
  });
  router.use(CONSOLE_PATH, (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    // `/console` itself: the page's relative links need the trailing slash.
    if (req.originalUrl.split('?')[0] === CONSOLE_PATH) {
      res.redirect(301, `${CONSOLE_PATH}/`);
      return;
    }
    const name = req.path === '/' ? 'index.html' : req.path.slice(1);
    const file = files.get(name);
    if (!file) return next();
    send(res, file.type, file.body);
  });
  return router;
}

function send(res: Response, type: string, body: Buffer, revalidate = true): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  if (revalidate) res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('Content-Type', type);
  res.end(body);
}
