/**
 * The W3C `traceparent` a door was sent with a submit, as the engine takes it (decision 65): the
 * HTTP header, or the `traceparent` entry of a protocol's metadata (MCP `_meta`, A2A message or
 * request `metadata`). Only read here: the engine checks it, and uses it only while an
 * OpenTelemetry SDK is on; a malformed one starts a new trace instead of failing the submit.
 * @example traceparentIn(req.headers.traceparent) // '00-4bf9…-00f0…-01'
 */
export function traceparentIn(...sources: unknown[]): string | undefined {
  for (const source of sources) {
    if (typeof source === 'string') return source;
    if (Array.isArray(source) && typeof source[0] === 'string') return source[0];
    if (source && typeof source === 'object' && !Array.isArray(source)) {
      const value = (source as { traceparent?: unknown }).traceparent;
      if (typeof value === 'string') return value;
    }
  }
  return undefined;
}
