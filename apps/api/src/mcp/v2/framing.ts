import type { IncomingHttpHeaders } from 'node:http';
import { JSONRPC, TASKS_EXTENSION, type RpcError } from '../errors.js';

/** The protocol revision the V2 handler speaks (stateless framing, tasks as an extension). */
export const V2_PROTOCOL_VERSION = '2026-07-28';

const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
} as const;

/** A well-framed 2026-07-28 request, as the handler acts on it. */
export interface V2Request {
  id: string | number;
  method: string;
  params: Record<string, unknown>;
  /** The client declared `io.modelcontextprotocol/tasks` in this request's capabilities. */
  tasks: boolean;
}

/** Why a message is not a request the handler can serve, and the HTTP status to answer. */
export interface FramingError {
  status: number;
  id: string | number | null;
  error: RpcError;
}

/** What a posted body is: a request to serve, a notification or response to accept, or wrong. */
export type Framed =
  { kind: 'request'; request: V2Request } | { kind: 'accepted' } | FramingErrorResult;
type FramingErrorResult = { kind: 'error' } & FramingError;

/**
 * Reads a POST of the stateless 2026-07-28 framing: one JSON-RPC message whose `_meta` carries
 * the protocol version (equal to the `MCP-Protocol-Version` header) and the client's
 * capabilities, with `Mcp-Method` (and, where the method has one, `Mcp-Name`: the tool name, or
 * the task id for `tasks/*`) mirroring the body. Mismatches are `-32020` with HTTP 400, an
 * unknown version `-32022` (SEP-2243, the 2026-07-28 schema).
 * @example readV2Message(req.headers, req.body).kind // 'request'
 */
export function readV2Message(headers: IncomingHttpHeaders, body: unknown): Framed {
  if (!isObject(body) || body.jsonrpc !== '2.0') {
    return refuse(400, null, JSONRPC.invalidRequest, 'Expected one JSON-RPC 2.0 message');
  }
  const id = typeof body.id === 'string' || typeof body.id === 'number' ? body.id : null;
  if (typeof body.method !== 'string') {
    // A response or error: the V2 server sends no requests, so there is nothing to route it to.
    return id !== null && ('result' in body || 'error' in body)
      ? { kind: 'accepted' }
      : refuse(400, id, JSONRPC.invalidRequest, 'Expected a JSON-RPC request or notification');
  }
  if (!('id' in body)) return { kind: 'accepted' }; // a notification
  if (id === null)
    return refuse(400, null, JSONRPC.invalidRequest, 'The request id must be a string or number');
  const method = body.method;
  const params = isObject(body.params) ? body.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  const header = (name: string) => {
    const value = headers[name];
    return typeof value === 'string' ? value : undefined;
  };

  const version = header('mcp-protocol-version');
  if (version !== V2_PROTOCOL_VERSION) {
    return refuse(400, id, JSONRPC.unsupportedProtocolVersion, 'Unsupported protocol version', {
      supported: [V2_PROTOCOL_VERSION],
      requested: version ?? meta[META.protocolVersion] ?? null,
    });
  }
  if (meta[META.protocolVersion] !== version) {
    return mismatch(
      id,
      `_meta["${META.protocolVersion}"] must equal the MCP-Protocol-Version header`,
    );
  }
  if (header('mcp-method') !== method) {
    return mismatch(id, `The Mcp-Method header must be "${method}"`);
  }
  const name = nameOf(method, params);
  if (name !== undefined && header('mcp-name') !== name) {
    return mismatch(id, `The Mcp-Name header must be "${name}"`);
  }
  const capabilities = meta[META.clientCapabilities];
  const extensions =
    isObject(capabilities) && isObject(capabilities.extensions) ? capabilities.extensions : {};
  return {
    kind: 'request',
    request: { id, method, params, tasks: isObject(extensions[TASKS_EXTENSION]) },
  };
}

/** The value `Mcp-Name` mirrors for a method, if it has one. */
function nameOf(method: string, params: Record<string, unknown>): string | undefined {
  const value = method.startsWith('tasks/')
    ? params.taskId
    : method === 'tools/call' || method === 'prompts/get'
      ? params.name
      : method.startsWith('resources/')
        ? params.uri
        : undefined;
  return typeof value === 'string' ? value : undefined;
}

function mismatch(id: string | number, message: string): FramingErrorResult {
  return refuse(400, id, JSONRPC.headerMismatch, message);
}

function refuse(
  status: number,
  id: string | number | null,
  code: number,
  message: string,
  data?: unknown,
): FramingErrorResult {
  return {
    kind: 'error',
    status,
    id,
    error: { code, message, ...(data === undefined ? {} : { data }) },
  };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
