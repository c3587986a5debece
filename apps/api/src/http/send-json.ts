import type { ServerResponse } from 'node:http';

/**
 * Answers `body` as JSON with the headers `res.json` sets (`Content-Type: application/json;
 * charset=utf-8`, `Content-Length`), without its trip through `res.send` (content-type parsing,
 * charset rewriting, freshness): for the answer to a submit, on the hot path, where neither HEAD
 * nor ETags apply.
 */
export function sendJson(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
