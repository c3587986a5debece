import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/** A request handler as the SDK's protocol layer keeps it, by method. */
type StoredHandler = (request: { params?: { name?: unknown } }, extra: unknown) => unknown;

const CALL_TOOL = CallToolRequestSchema.shape.method.value;

/**
 * Makes `server` answer a `tools/call` of a tool not in `names` with the protocol error the
 * specification asks for (JSON-RPC `-32602`, invalid params, as an `McpError`). The SDK's
 * `McpServer` answers one with a tool result `isError: true`: it turns every error of a call into
 * such a result, which is meant for a tool's own failure (issue 27; the conformance suite's
 * `server-sse-polling` scenario checks for the error).
 *
 * `McpServer` installs its `tools/call` handler when it is constructed (the `tools` capability)
 * and offers no way to wrap it, so this wraps it where the protocol layer keeps it (its handler
 * map, private in the SDK's types; the SDK is pinned, and tests/mcp.test.ts fails if the map
 * moves). Without a handler there (no tools capability) it installs one that refuses every name.
 * @example refuseUnknownTools(server, new Set(['echo'])) // then tools/call {name: 'nope'} → -32602
 */
export function refuseUnknownTools(server: McpServer, names: ReadonlySet<string>): void {
  const low = server.server as unknown as { _requestHandlers?: Map<string, StoredHandler> };
  const handlers = low._requestHandlers;
  if (!handlers) throw new Error('MCP SDK: the request handler map moved; see unknown-tool.ts');
  const inner = handlers.get(CALL_TOOL);
  handlers.set(CALL_TOOL, (request, extra) => {
    const name = request.params?.name;
    if (typeof name !== 'string' || !names.has(name)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${String(name)}`);
    }
    if (!inner) throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${CALL_TOOL}`);
    return inner(request, extra);
  });
}
