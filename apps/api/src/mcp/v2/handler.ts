import type { Request, Response } from 'express';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { TaskEngine } from '@longrun/engine';
import { answerElicitation } from '../answers.js';
import { JSONRPC, submitError, TASK_NOT_FOUND, TASKS_EXTENSION, type RpcError } from '../errors.js';
import { callFollowTool, FOLLOW_TOOLS, isFollowTool } from '../follow-tools.js';
import { plainCall } from '../plain-call.js';
import { inputKeyOf } from '../task-views.js';
import { toolsFrom } from '../tools.js';
import { INSTRUCTIONS, SERVER_INFO } from '../v1-server.js';
import { isObject, readV2Message, V2_PROTOCOL_VERSION, type V2Request } from './framing.js';
import { listen, NEEDS_TASKS } from './listen.js';
import { createTaskResult, detailedTask } from './views.js';
import { traceparentIn } from '../../http/trace-context.js';

export interface V2Deps {
  engine: TaskEngine;
}

/** A method's answer: a result object, or a JSON-RPC error (with its HTTP status). */
type Answer = { result: Record<string, unknown> } | { error: RpcError; status?: number };

const SERVER_META = { 'io.modelcontextprotocol/serverInfo': SERVER_INFO };

/**
 * The Tasks V2 door (`io.modelcontextprotocol/tasks` at MCP 2026-07-28) on the stateless
 * framing: no `initialize`, every request self-describing, so any replica serves any request
 * from the engine alone. Answers are single JSON responses.
 *
 * `tools/call` from a client declaring the extension creates a task and answers
 * `resultType: "task"` once a `tasks/get` would find it (the engine's submit returns after the
 * record is written). A client without it gets a short tool's result in the same request and
 * the handle as a tool result for the others, followed with the follow tools (issue 32).
 * `tasks/get|update|cancel` act for the caller's tenant only. `subscriptions/listen` with
 * `notifications.taskIds` answers a stream of `notifications/tasks` (listen.ts).
 */
export async function serveV2(deps: V2Deps, req: Request, res: Response): Promise<void> {
  const framed = readV2Message(req.headers, req.body);
  if (framed.kind === 'accepted') {
    res.status(202).end();
    return;
  }
  if (framed.kind === 'error') {
    res.status(framed.status).json({ jsonrpc: '2.0', id: framed.id, error: framed.error });
    return;
  }
  const left = new AbortController();
  res.on('close', () => left.abort());
  const { request } = framed;
  const tenant = res.locals.tenant as string;
  if (request.method === 'subscriptions/listen') {
    const refused = await listen(deps.engine, tenant, request, res);
    if (refused) {
      res
        .status(refused.status ?? 200)
        .json({ jsonrpc: '2.0', id: request.id, error: refused.error });
    }
    return;
  }
  const answer = await dispatch(deps, tenant, request, {
    requestId: res.locals.requestId as string | undefined,
    signal: left.signal,
  });
  if ('error' in answer) {
    res.status(answer.status ?? 200).json({ jsonrpc: '2.0', id: request.id, error: answer.error });
    return;
  }
  res.json({
    jsonrpc: '2.0',
    id: request.id,
    result: { ...answer.result, _meta: { ...SERVER_META } },
  });
}

interface CallContext {
  requestId: string | undefined;
  signal: AbortSignal;
}

async function dispatch(
  { engine }: V2Deps,
  tenant: string,
  request: V2Request,
  context: CallContext,
): Promise<Answer> {
  const { method, params } = request;
  switch (method) {
    case 'server/discover':
      return {
        result: {
          resultType: 'complete',
          supportedVersions: [V2_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS],
          capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
          instructions: INSTRUCTIONS,
          ttlMs: 0,
          cacheScope: 'public',
        },
      };
    case 'ping':
      return { result: { resultType: 'complete' } };
    case 'tools/list':
      return {
        result: {
          resultType: 'complete',
          tools: [
            ...toolsFrom(await engine.jobTypes()).map((t) => ({
              name: t.name,
              description: t.description,
              inputSchema: t.inputSchema,
            })),
            ...FOLLOW_TOOLS,
          ],
          // The list follows the workers: a client should ask again rather than cache it.
          ttlMs: 0,
          cacheScope: 'public',
        },
      };
    case 'tools/call':
      return callTool(engine, tenant, request, context);
    case 'tasks/get':
    case 'tasks/update':
    case 'tasks/cancel':
      if (!request.tasks) return NEEDS_TASKS;
      if (typeof params.taskId !== 'string') return invalidParams('params.taskId must be a string');
      return taskMethod(engine, tenant, method, params.taskId, params);
    default:
      return { error: { code: JSONRPC.methodNotFound, message: `Method not found: ${method}` } };
  }
}

async function callTool(
  engine: TaskEngine,
  tenant: string,
  request: V2Request,
  context: CallContext,
): Promise<Answer> {
  const { name, arguments: input = {} } = request.params;
  if (typeof name !== 'string') return invalidParams('params.name must be a string');
  if (isFollowTool(name)) {
    const result = await callFollowTool(engine, tenant, name, input, { signal: context.signal });
    return { result: { resultType: 'complete', ...result } };
  }
  if (!request.tasks) {
    // Without the extension: a short tool's result, or a long tool's handle (issue 32).
    const outcome = await plainCall(engine, tenant, name, input, {
      ...context,
      traceparent: traceparentIn(request.params._meta),
    });
    if (outcome.kind === 'unknown') return invalidParams(`Unknown tool: ${name}`);
    if (outcome.kind === 'refused') return { error: outcome.error };
    return { result: { resultType: 'complete', ...outcome.result } };
  }
  const submitted = await engine.submit(
    tenant,
    { type: name, input },
    { requestId: context.requestId, traceparent: traceparentIn(request.params._meta) },
  );
  if (submitted.kind !== 'created' && submitted.kind !== 'replayed') {
    return { error: submitError(submitted) };
  }
  return { result: createTaskResult(submitted.task) };
}

async function taskMethod(
  engine: TaskEngine,
  tenant: string,
  method: 'tasks/get' | 'tasks/update' | 'tasks/cancel',
  taskId: string,
  params: Record<string, unknown>,
): Promise<Answer> {
  if (method === 'tasks/cancel') {
    const cancelled = await engine.cancel(tenant, taskId);
    // A task that finished first is acknowledged all the same: cancellation is a request.
    return cancelled.kind === 'notFound' ? { error: TASK_NOT_FOUND } : complete();
  }
  const found = await engine.get(tenant, taskId);
  if (found.kind !== 'found') return { error: TASK_NOT_FOUND };
  if (method === 'tasks/get') return { result: detailedTask(found.task) };

  const responses = params.inputResponses;
  if (!isObject(responses)) return invalidParams('params.inputResponses must be an object');
  // Responses to keys that are not open (never issued, answered, superseded) are ignored.
  const key = inputKeyOf(found.task);
  if (key === null || responses[key] === undefined) return complete();
  const outcome = await answerElicitation(engine, tenant, taskId, responses[key]);
  if (outcome.kind === 'refused') return { error: outcome.error };
  if (outcome.kind === 'notFound') return { error: TASK_NOT_FOUND };
  return complete();
}

function complete(): Answer {
  return { result: { resultType: 'complete' } };
}

function invalidParams(message: string): Answer {
  return { error: { code: JSONRPC.invalidParams, message } };
}
