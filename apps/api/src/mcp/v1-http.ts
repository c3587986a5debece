import type { Request, Response } from 'express';
import type { QueuedMessage } from '@modelcontextprotocol/sdk/experimental/tasks';
import { isInitializeRequest, isJSONRPCErrorResponse } from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { TaskEngine } from '@longrun/engine';
import type { Logger } from 'pino';
import { mintSession, readSession, type McpSession } from './session.js';
import { isSideChannelAnswer, readSideChannelId, type SideChannelAnswer } from './side-channel.js';
import { pushTaskStatuses } from './status-push.js';
import type { ToolListChanges } from './tool-list-changes.js';
import { v1Server } from './v1-server.js';
import { isReconnectionCall, type ConformanceProfile } from './conformance/index.js';

export interface V1Deps {
  engine: TaskEngine;
  maxTtlMs: number;
  validator: jsonSchemaValidator;
  toolChanges: ToolListChanges;
  logger?: Logger | undefined;
  /** The conformance profile (LONGRUN_MCP_CONFORMANCE), off when absent. */
  conformance?: ConformanceProfile | undefined;
}

/**
 * A POST of the 2025-11-25 door (Streamable HTTP). `initialize` mints the session id (it carries
 * the session: decision 34); any other request must present one. A client's answers to our
 * side-channel requests are queued on their task (the `tasks/result` call waiting on it, on any
 * replica, applies them); everything else goes to a fresh SDK server for this request.
 */
export async function postV1(deps: V1Deps, req: Request, res: Response): Promise<void> {
  const tenant = res.locals.tenant as string;
  const body: unknown = req.body;
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const init = messages.find(isInitializeRequest);
  let session: McpSession | null;
  if (init) {
    const id = mintSession(init.params.capabilities);
    session = readSession(id);
    // The SDK transport runs stateless (it would keep its session in memory): the id is ours.
    res.setHeader('Mcp-Session-Id', id);
  } else {
    session = sessionOf(req, res);
  }
  if (!session) return;

  for (const answer of messages.filter(isSideChannelAnswer)) {
    await intake(deps.engine, tenant, answer, deps.logger);
  }
  // The profile's own requests to the client (sampling, elicitation) are answered here.
  const pending = deps.conformance?.pending;
  const rest = messages.filter((m) => !isSideChannelAnswer(m) && !pending?.take(m));
  if (rest.length === 0) {
    res.status(202).end();
    return;
  }
  if (rest.some((m) => needsFreshTypes(deps.engine, m))) await deps.engine.jobTypes();
  const gone = new AbortController();
  const { server, transport } = v1Server({
    engine: deps.engine,
    tenant,
    session,
    maxTtlMs: deps.maxTtlMs,
    requestId: res.locals.requestId as string | undefined,
    logger: deps.logger,
    validator: deps.validator,
    signal: gone.signal,
    conformance: deps.conformance,
    jsonResponse: deps.conformance !== undefined && rest.every(isReconnectionCall),
  });
  // Nothing outlives the request: a client gone stops a held tasks/result too.
  res.on('close', () => {
    gone.abort();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, Array.isArray(body) ? rest : rest[0]);
}

/**
 * The GET stream of the 2025-11-25 door: server-to-client notifications of the session, here
 * `notifications/tools/list_changed` when the registered job types change (every replica sees
 * the registry, so the replica holding the stream tells it), and, to a client that declared
 * tasks, `notifications/tasks/status` on each status change of its tenant's tasks
 * (`pushTaskStatuses`).
 */
export async function getV1(deps: V1Deps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(req, res);
  if (!session) return;
  const tenant = res.locals.tenant as string;
  const { server, transport } = v1Server({
    engine: deps.engine,
    tenant,
    session,
    maxTtlMs: deps.maxTtlMs,
    logger: deps.logger,
    validator: deps.validator,
    conformance: deps.conformance,
  });
  const off = deps.toolChanges.add(() => server.sendToolListChanged());
  const stopPush = session.tasks
    ? pushTaskStatuses(deps.engine, tenant, {
        relistMs: Math.max(5 * deps.engine.pollIntervalMs, 1000),
        send: (task) =>
          void server.server
            .notification({ method: 'notifications/tasks/status', params: task })
            .catch(() => undefined),
      })
    : () => undefined;
  res.on('close', () => {
    off();
    stopPush();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}

/**
 * Whether a message should see the registry as it is now rather than as this replica last read
 * it (at most a few seconds old): `tools/list`, and a call of a tool not known here yet (a worker
 * may have just registered it).
 */
function needsFreshTypes(engine: TaskEngine, message: unknown): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
  if (method === 'tools/list') return true;
  if (method !== 'tools/call' || typeof params?.name !== 'string') return false;
  return !engine.knownJobTypes.some((t) => t.name === params.name);
}

/** The request's session, or null once the error is answered (as the SDK's transport does). */
function sessionOf(req: Request, res: Response): McpSession | null {
  const header = req.headers['mcp-session-id'];
  if (typeof header !== 'string') {
    rpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    return null;
  }
  const session = readSession(header);
  // An id we did not mint: the client starts a new session (404, per the transport spec).
  if (!session) rpcError(res, 404, -32001, 'Session not found');
  return session;
}

/**
 * Queues a client's answer on the task it names (the task's Redis message queue, as the SDK's
 * `QueuedMessage`); one for a task that is gone or not the tenant's is dropped.
 */
async function intake(
  engine: TaskEngine,
  tenant: string,
  answer: SideChannelAnswer,
  logger: Logger | undefined,
): Promise<void> {
  const asked = readSideChannelId(answer.id);
  if (!asked) return;
  const queued: QueuedMessage = isJSONRPCErrorResponse(answer)
    ? { type: 'error', message: answer, timestamp: Date.now() }
    : { type: 'response', message: answer, timestamp: Date.now() };
  const outcome = await engine.messages.push(tenant, asked.taskId, JSON.stringify(queued));
  if (outcome !== 'queued') {
    logger?.info({ taskId: asked.taskId, outcome }, 'answer to an input request dropped');
  }
}

export function rpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}
