import type { NextFunction, Request, Response } from 'express';

/** Host names a browser page may have as its origin when it calls `/mcp`: this machine's. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * DNS rebinding protection for `/mcp` (MCP 2025-11-25, transports: "servers MUST validate the
 * Origin header … if the Origin header is present and invalid, servers MUST respond with HTTP
 * 403 Forbidden"). MCP clients (SDKs, agents) send no `Origin`, and are not affected. A request
 * that carries one comes from a browser page; the API sends no CORS headers, so the only pages
 * whose calls get through are those the browser takes for same-origin, which a rebound DNS name
 * (`evil.example.com` resolving to this machine) is. So a page's origin must be a loopback name,
 * with the `Host` it addressed one too, or the request is refused before anything else is read.
 * @example router.post('/mcp', checkOrigin, …) // Origin: http://evil.example.com → 403
 */
export function checkOrigin(req: Request, res: Response, next: NextFunction): void {
  const origin = req.headers.origin;
  if (origin === undefined || (isLoopbackOrigin(origin) && isLoopbackHost(req.headers.host))) {
    next();
    return;
  }
  res.status(403).json({
    jsonrpc: '2.0',
    error: { code: -32000, message: `Forbidden: origin ${origin} may not call this server` },
    id: null,
  });
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK.has(url.hostname);
  } catch {
    return false;
  }
}

function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return LOOPBACK.has(new URL(`http://${host}`).hostname);
  } catch {
    return false;
  }
}
