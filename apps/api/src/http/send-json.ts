import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Answers `body` as JSON with the headers `res.json` sets (`Content-Type: application/json;
 * charset=utf-8`, `Content-Length`), without its trip through `res.send` (content-type parsing,
 * charset rewriting): for the answers to a submit and a poll, on the hot path. With `req` (a GET
 * or HEAD), what `res.send` kept of freshness is kept too: no ETag or Last-Modified is sent, so
 * only `If-None-Match: *` (without `Cache-Control: no-cache`) makes a 2xx answer `304` without a
 * body, as Express's `req.fresh` does.
 */
export function sendJson(res: ServerResponse, body: unknown, req?: IncomingMessage): void {
  if (req && fresh(req, res.statusCode)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

const NO_CACHE = /(?:^|,)\s*?no-cache\s*?(?:,|$)/;

/** Express's `req.fresh` for an answer without validators (the `fresh` package's rules). */
function fresh(req: IncomingMessage, status: number): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (!((status >= 200 && status < 300) || status === 304)) return false;
  if (req.headers['if-none-match'] !== '*') return false;
  const cacheControl = req.headers['cache-control'];
  return !(cacheControl && NO_CACHE.test(cacheControl));
}
