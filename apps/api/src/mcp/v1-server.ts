import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import {
  GetTaskPayloadRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { TaskHandle } from '@longrun/core';
import { z } from 'zod';
import type { TaskEngine } from '@longrun/engine';
import type { Logger } from 'pino';
import { EngineMessageQueue } from './engine-message-queue.js';
import { EngineTaskStore } from './engine-task-store.js';
import type { McpSession } from './session.js';
import { taskResultHandler } from './task-result.js';
import { callFollowTool, FOLLOW_TOOLS, isFollowTool } from './follow-tools.js';
import { plainCall } from './plain-call.js';
import { askForInput } from './plain-input.js';
import { progressNotifier, progressTokenOf } from './task-follow.js';
import { routeToolCalls } from './tool-calls.js';
import { toolsFrom } from './tools.js';
import { traceparentIn } from '../http/trace-context.js';
import {
  PROFILE_CAPABILITIES,
  registerFixtures,
  type ConformanceProfile,
} from './conformance/index.js';

/** What the door says about itself (`serverInfo`). */
export const SERVER_INFO = { name: 'longrun', version: '0.1.0' };

/**
 * The instructions `initialize` (and V2 `server/discover`) gives a model: how longrun's tools
 * behave, which the tool descriptions do not repeat.
 */
export const INSTRUCTIONS =
  'Each tool runs a longrun job type as a durable task: call it as a task, poll tasks/get at ' +
  'the pollInterval it gives, and collect the result (tasks/result). A task that needs input ' +
  'asks for it through elicitation. Without MCP Tasks, a long tool answers at once with a ' +
  'taskId: follow it with longrun_get_task (waitSeconds waits for a change), answer a question ' +
  'with longrun_answer_task, stop it with longrun_cancel_task. Tasks are the API key owner’s, ' +
  'visible over HTTP too (GET /v1/jobs/<taskId>).';

/** What the plain tools/call route reads of the SDK's request extra. */
interface PlainExtra {
  signal: AbortSignal;
  requestId: string | number;
  sendNotification(notification: {
    method: string;
    params: Record<string, unknown>;
  }): Promise<void>;
}

export interface V1RequestDeps {
  engine: TaskEngine;
  tenant: string;
  session: McpSession;
  maxTtlMs: number;
  requestId?: string | undefined;
  logger?: Logger | undefined;
  /** One validator for every request (the SDK would compile a new ajv per server). */
  validator: jsonSchemaValidator;
  /** Aborted when the HTTP request is gone. */
  signal?: AbortSignal | undefined;
  /** The conformance profile (LONGRUN_MCP_CONFORMANCE), off when absent. */
  conformance?: ConformanceProfile | undefined;
  /** Answer the request as JSON rather than an event stream (the profile's test_reconnection). */
  jsonResponse?: boolean | undefined;
}

/**
 * The SDK server for one HTTP request of the 2025-11-25 door: an `McpServer` with every
 * registered job type as a task tool (`registerToolTask`), the engine-backed `TaskStore` and
 * Redis task message queue of the caller's tenant, on a stateless transport (decision 34). It
 * holds nothing after the request: every replica builds the same one from Redis.
 *
 * Three SDK handlers are replaced: `tools/list`, so each tool shows its registry's JSON Schema
 * unchanged (the SDK would regenerate it from a zod schema), with the follow tools, and long tools
 * `optional` to a client that did not declare tasks; `tools/call`, whose calls without
 * `params.task` (and follow tools) are served by `plainCall` and `callFollowTool`; and
 * `tasks/result`, which holds on the engine and carries the input side channel across replicas
 * (`taskResultHandler`). With the conformance profile (`deps.conformance`) the suite's fixtures
 * are registered on the same server (`conformance/`, decision 67).
 */
export function v1Server(deps: V1RequestDeps): {
  server: McpServer;
  transport: StreamableHTTPServerTransport;
} {
  const { engine, tenant } = deps;
  const taskStore = new EngineTaskStore(engine, tenant, {
    maxTtlMs: deps.maxTtlMs,
    requestId: deps.requestId,
  });
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    ...(deps.jsonResponse ? { enableJsonResponse: true } : {}),
  });
  // The server's answers to this request's messages go back on it (see EngineMessageQueue).
  const queue = new EngineMessageQueue(engine, tenant, (message) => transport.send(message));
  const server = new McpServer(SERVER_INFO, {
    capabilities: {
      tools: { listChanged: true },
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      ...(deps.conformance ? PROFILE_CAPABILITIES : {}),
    },
    instructions: INSTRUCTIONS,
    taskStore,
    taskMessageQueue: queue,
    defaultTaskPollInterval: engine.pollIntervalMs,
    jsonSchemaValidator: deps.validator,
  });
  const tools = toolsFrom(engine.knownJobTypes);
  for (const tool of tools) {
    server.experimental.tasks.registerToolTask(
      tool.name,
      {
        description: tool.description,
        // The arguments pass through as they are: the engine validates them against the
        // registry's JSON Schema (ajv), as it does every submit.
        inputSchema: z.looseObject({}),
        execution: { taskSupport: tool.taskSupport },
      },
      {
        createTask: async (_args, extra) => ({
          task: await extra.taskStore.createTask({
            ...(extra.taskRequestedTtl === undefined ? {} : { ttl: extra.taskRequestedTtl }),
            pollInterval: engine.pollIntervalMs,
          }),
        }),
        getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
        // The store answers a tool result (`toolResultOf`); its interface says only `Result`.
        getTaskResult: async (_args, extra) =>
          (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
      },
    );
  }
  const taskTools = new Set(tools.map((t) => t.name));
  const fixtures = deps.conformance
    ? registerFixtures(
        server,
        {
          session: deps.session,
          pending: deps.conformance.pending,
          send: (message, relatedRequestId) => transport.send(message, { relatedRequestId }),
        },
        taskTools,
      )
    : [];
  // Task-augmented calls go to the SDK; the rest (a job type without Tasks, a follow tool) are
  // answered here; an unknown tool is a protocol error (-32602).
  routeToolCalls(server, {
    taskTools,
    sdkTools: new Set(fixtures.map((t) => t.name)),
    plain: async (name, request, extra) => {
      const sdk = extra as PlainExtra;
      const sendNotification = sdk.sendNotification.bind(sdk);
      const signal = deps.signal ? AbortSignal.any([sdk.signal, deps.signal]) : sdk.signal;
      const onUpdate = progressNotifier(progressTokenOf(request.params), (n) =>
        sendNotification(n),
      );
      const args = request.params?.arguments;
      if (isFollowTool(name)) {
        return (await callFollowTool(engine, tenant, name, args, {
          signal,
          onUpdate,
        })) as CallToolResult;
      }
      // A client that takes form elicitation is asked a short task's questions in the call.
      const send = (message: JSONRPCMessage) =>
        transport.send(message, { relatedRequestId: sdk.requestId });
      const askInput = deps.session.elicitation
        ? (handle: TaskHandle) => askForInput({ engine, tenant, queue, send }, handle, signal)
        : undefined;
      const outcome = await plainCall(engine, tenant, name, args, {
        requestId: deps.requestId,
        traceparent: traceparentIn(request.params?._meta),
        signal,
        onUpdate,
        askInput,
      });
      if (outcome.kind === 'unknown') return null;
      if (outcome.kind === 'result') return outcome.result as CallToolResult;
      // As the SDK answers a tool's failure: a result the model can read and correct.
      return { content: [{ type: 'text', text: outcome.error.message }], isError: true };
    },
  });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      ...tools.map((tool): Tool => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema as Tool['inputSchema'],
        // A client that did not declare tasks may call every tool plainly (issue 32).
        execution: { taskSupport: deps.session.tasks ? tool.taskSupport : 'optional' },
      })),
      ...fixtures,
      ...FOLLOW_TOOLS.map((tool): Tool => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema as Tool['inputSchema'],
        execution: { taskSupport: 'forbidden' },
      })),
    ],
  }));
  server.server.setRequestHandler(
    GetTaskPayloadRequestSchema,
    taskResultHandler({
      engine,
      tenant,
      session: deps.session,
      queue,
      send: (message, relatedRequestId) => transport.send(message, { relatedRequestId }),
      logger: deps.logger,
    }),
  );
  return { server, transport };
}
