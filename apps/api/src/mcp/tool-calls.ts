import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';

/** A request handler as the SDK's protocol layer keeps it, by method. */
type StoredHandler = (
  request: { params?: { name?: unknown; task?: unknown } },
  extra: unknown,
) => unknown;

const CALL_TOOL = CallToolRequestSchema.shape.method.value;

/** How `routeToolCalls` serves `tools/call`. */
export interface ToolRoutes {
  /** Tools the SDK serves as tasks: a call of one with `params.task` goes to its handler. */
  taskTools: ReadonlySet<string>;
  /** Tools registered on the SDK's `McpServer` itself (the conformance profile's fixtures). */
  sdkTools?: ReadonlySet<string> | undefined;
  /** Any other call: its tool result, or null when no tool has that name. */
  plain(
    name: string,
    request: { params?: Record<string, unknown> },
    extra: unknown,
  ): Promise<CallToolResult | null>;
}

/**
 * Takes over the `tools/call` handler of `server`: a task-augmented call of a job-type tool goes
 * to the SDK (`registerToolTask`, the engine-backed task store), every other call to
 * `routes.plain` (a job type without Tasks, a follow tool), and a call of no known tool is the
 * protocol error the specification asks for (JSON-RPC `-32602`, invalid params), where the SDK's
 * `McpServer` would answer a tool result `isError: true` (issue 27; the conformance suite checks).
 *
 * `McpServer` installs its `tools/call` handler when it is constructed (the `tools` capability)
 * and offers no way to wrap it, so this wraps it where the protocol layer keeps it (its handler
 * map, private in the SDK's types; the SDK is pinned, and tests/mcp.test.ts fails if the map
 * moves).
 * @example routeToolCalls(server, { taskTools: new Set(['sleep']), plain }) // then tools/call {name: 'nope'} → -32602
 */
export function routeToolCalls(server: McpServer, routes: ToolRoutes): void {
  const low = server.server as unknown as { _requestHandlers?: Map<string, StoredHandler> };
  const handlers = low._requestHandlers;
  if (!handlers) throw new Error('MCP SDK: the request handler map moved; see tool-calls.ts');
  const inner = handlers.get(CALL_TOOL);
  handlers.set(CALL_TOOL, async (request, extra) => {
    const name = request.params?.name;
    if (typeof name !== 'string') {
      throw new McpError(ErrorCode.InvalidParams, 'params.name must be a string');
    }
    if (inner && request.params?.task !== undefined && routes.taskTools.has(name)) {
      return inner(request, extra);
    }
    if (inner && routes.sdkTools?.has(name)) return inner(request, extra);
    const result = await routes.plain(name, request as { params?: Record<string, unknown> }, extra);
    if (!result) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    return result;
  });
}
