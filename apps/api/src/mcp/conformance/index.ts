import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import { CLIENT_TOOLS, registerClientTools } from './client-tools.js';
import { CONTENT_TOOLS, RECONNECTION_TOOL, registerContentTools } from './content-tools.js';
import { registerCatalog } from './catalog.js';
import type { FixtureContext } from './context.js';
import { PendingAnswers } from './pending.js';

export type { FixtureContext } from './context.js';

/**
 * The MCP door's conformance profile (`LONGRUN_MCP_CONFORMANCE=true`, decision 67): what the
 * official conformance suite calls that longrun has no use for, on the door's own `McpServer`.
 * For running the suite, never in production. The suite's job-shaped fixtures
 * (`test_simple_text`, `test_error_handling`, `test_tool_with_progress`) are not here: they are
 * job types the stock worker serves with the same setting, called through the engine.
 */
export class ConformanceProfile {
  /** Requests to clients awaiting an answer on another POST (per process). */
  readonly pending = new PendingAnswers();
}

/** Capabilities the profile adds before the SDK registers the rest (logging needs it here). */
export const PROFILE_CAPABILITIES: ServerCapabilities = { logging: {} };

/** Every fixture tool the profile serves at the SDK level, as `tools/list` shows it. */
export const FIXTURE_TOOLS: readonly Tool[] = [...CONTENT_TOOLS, ...CLIENT_TOOLS];

/**
 * Registers the fixtures on one request's server; the fixture tools registered, for `tools/list`
 * and `tools/call`. A job type registered under a fixture's name would clash with it in the
 * SDK's tool map, so then no fixture tool is registered (the job types are what the deployment
 * serves).
 */
export function registerFixtures(
  server: McpServer,
  ctx: FixtureContext,
  jobTools: ReadonlySet<string>,
): Tool[] {
  const tools = FIXTURE_TOOLS.filter((t) => !jobTools.has(t.name));
  if (tools.length === FIXTURE_TOOLS.length) {
    registerContentTools(server);
    registerClientTools(server, ctx);
  }
  registerCatalog(server);
  return tools.length === FIXTURE_TOOLS.length ? [...tools] : [];
}

/**
 * Whether a POST is a call of `test_reconnection`, answered as JSON: the door keeps no event
 * store, so it never closes a call's stream for the client to resume (decision 67).
 */
export function isReconnectionCall(message: unknown): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
  return method === 'tools/call' && params?.name === RECONNECTION_TOOL;
}
