import type { IRouter, Request, RequestHandler, Response } from 'express';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { TaskEngine } from '@longrun/engine';
import type { Logger } from 'pino';
import { jsonBody } from '../http/json-body.js';
import { holdStream, type StreamSlots } from '../http/stream-slots.js';
import { ConformanceProfile } from './conformance/index.js';
import { checkOrigin } from './origin.js';
import { ToolListChanges } from './tool-list-changes.js';
import { getV1, postV1, rpcError, type V1Deps } from './v1-http.js';
import { serveV2 } from './v2/handler.js';

/** Where the door listens. */
export const MCP_PATH = '/mcp';

export interface McpDoorDeps {
  engine: TaskEngine;
  /** Authentication (the bearer key's tenant in `res.locals.tenant`) and limits, run first. */
  before: RequestHandler[];
  /** `LONGRUN_MAX_TTL_MS`: requested task ttls are clamped to it. */
  maxTtlMs: number;
  logger?: Logger | undefined;
  /** The open streams' count: a `tasks/result`, a `subscriptions/listen` and the GET stream each hold a slot. */
  streams: StreamSlots;
  /** LONGRUN_MCP_CONFORMANCE: serve the official suite's fixtures (decision 67). */
  conformance?: boolean | undefined;
}

/**
 * Mounts the MCP door on `/mcp` (Streamable HTTP, the API's bearer keys: 401 without one). One
 * endpoint, two generations, both over the one engine, neither keeping task state in a process:
 *
 * - 2025-11-25 (the official SDK's `McpServer`, tasks utility): `initialize`, then requests with
 *   the `Mcp-Session-Id` it gave; every job type is a task tool; `tasks/get|list|cancel|result`.
 * - 2026-07-28 with the `io.modelcontextprotocol/tasks` extension (Tasks V2): any request whose
 *   `MCP-Protocol-Version` the SDK does not know, and `server/discover`, go to the stateless V2
 *   handler before the SDK (whose transport refuses that version).
 * @example mountMcp(app, { engine, before: [requireTenant(keys)], maxTtlMs, logger, streams })
 */
export function mountMcp(router: IRouter, deps: McpDoorDeps): void {
  const v1: V1Deps = {
    engine: deps.engine,
    maxTtlMs: deps.maxTtlMs,
    validator: new AjvJsonSchemaValidator(),
    toolChanges: new ToolListChanges(() => deps.engine.knownJobTypes),
    logger: deps.logger,
    conformance: deps.conformance ? new ConformanceProfile() : undefined,
  };
  const v2 = { engine: deps.engine };
  const held = holdStream(deps.streams, staysOpen);
  router.post(
    MCP_PATH,
    checkOrigin,
    ...deps.before,
    jsonBody(),
    held,
    async (req: Request, res: Response) => {
      if (isV2(req)) await serveV2(v2, req, res);
      else await postV1(v1, req, res);
    },
  );
  router.get(
    MCP_PATH,
    checkOrigin,
    ...deps.before,
    holdStream(deps.streams, (req) => !isV2(req)),
    async (req: Request, res: Response) => {
      // 2026-07-28 has no GET stream.
      if (isV2(req)) notAllowed(res, 'POST');
      else await getV1(v1, req, res);
    },
  );
  // Sessions live in their ids, not on a server: there is nothing to end (the spec's 405).
  router.delete(MCP_PATH, checkOrigin, ...deps.before, (_req: Request, res: Response) =>
    notAllowed(res, 'GET, POST'),
  );
  router.all(MCP_PATH, checkOrigin, ...deps.before, (_req: Request, res: Response) =>
    notAllowed(res, 'GET, POST'),
  );
}

/**
 * A POST that stays open while a task runs: one carrying `tasks/result` (2025-11-25), which
 * holds until the task ends (days, for one waiting on an approval), or `subscriptions/listen`
 * (2026-07-28), whose stream lasts until its tasks end.
 */
function staysOpen(req: Request): boolean {
  const body: unknown = req.body;
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.some(
    (m) =>
      typeof m === 'object' &&
      m !== null &&
      ['tasks/result', 'subscriptions/listen'].includes(
        (m as { method?: unknown }).method as string,
      ),
  );
}

/** A request of the stateless generation: a version the SDK does not know, or its discovery. */
function isV2(req: Request): boolean {
  const version = req.headers['mcp-protocol-version'];
  if (typeof version === 'string') return !SUPPORTED_PROTOCOL_VERSIONS.includes(version);
  const body: unknown = req.body;
  return (
    typeof body === 'object' &&
    body !== null &&
    (body as { method?: unknown }).method === 'server/discover'
  );
}

function notAllowed(res: Response, allow: string): void {
  res.setHeader('Allow', allow);
  rpcError(res, 405, -32000, 'Method not allowed.');
}
