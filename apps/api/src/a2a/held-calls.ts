import type { Request } from 'express';

/**
 * The A2A calls that stay open while their task runs (days, for one waiting on an approval), so
 * each holds a stream slot (`holdStream`): `SendStreamingMessage`, `SubscribeToTask`, and a
 * `SendMessage` that waits for the task (without `configuration.returnImmediately`).
 */
const STREAMING_METHODS = new Set(['SendStreamingMessage', 'SubscribeToTask']);

/** A JSON-RPC call (`POST /a2a/jsonrpc`) that stays open. */
export function isHeldJsonRpc(req: Request): boolean {
  const body: unknown = req.body;
  if (typeof body !== 'object' || body === null) return false;
  const { method, params } = body as { method?: unknown; params?: unknown };
  if (typeof method !== 'string') return false;
  if (STREAMING_METHODS.has(method)) return true;
  return method === 'SendMessage' && !returnsImmediately(params);
}

/** A REST call (`/a2a/rest/…`) that stays open: `message:stream`, `tasks/<id>:subscribe`, a blocking `message:send`. */
export function isHeldRest(req: Request): boolean {
  const path = req.path.replace(/%3A/gi, ':');
  if (path.endsWith('/message:stream') || path.endsWith(':subscribe')) return true;
  return req.method === 'POST' && path.endsWith('/message:send') && !returnsImmediately(req.body);
}

/** Whether a send request asks to be answered at once (either JSON spelling of the field). */
function returnsImmediately(params: unknown): boolean {
  if (typeof params !== 'object' || params === null) return false;
  const configuration = (params as { configuration?: unknown }).configuration;
  if (typeof configuration !== 'object' || configuration === null) return false;
  const { returnImmediately, return_immediately } = configuration as Record<string, unknown>;
  return Boolean(returnImmediately ?? return_immediately);
}
