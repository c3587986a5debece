import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  isJSONRPCErrorResponse,
  type CallToolResult,
  type JSONRPCRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { FixtureContext } from './context.js';

/** How long a fixture waits for the client's answer. */
const ANSWER_TIMEOUT_MS = 30_000;

/** The elicitation schemas the suite's scenarios read (SEP-1034 defaults, SEP-1330 enums). */
const ELICITATIONS: Record<string, { message: string; schema: Record<string, unknown> }> = {
  test_elicitation_sep1034_defaults: {
    message: 'Please review the defaults',
    schema: {
      type: 'object',
      properties: {
        name: { type: 'string', default: 'John Doe' },
        age: { type: 'integer', default: 30 },
        score: { type: 'number', default: 95.5 },
        status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', default: true },
      },
    },
  },
  test_elicitation_sep1330_enums: {
    message: 'Please choose',
    schema: {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        titledSingle: {
          type: 'string',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
            { const: 'value3', title: 'Third Option' },
          ],
        },
        legacyEnum: {
          type: 'string',
          enum: ['opt1', 'opt2', 'opt3'],
          enumNames: ['Option One', 'Option Two', 'Option Three'],
        },
        untitledMulti: {
          type: 'array',
          items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        },
        titledMulti: {
          type: 'array',
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
              { const: 'value3', title: 'Third Choice' },
            ],
          },
        },
      },
    },
  },
};

/** The fixture tools that ask the client something (sampling, elicitation), as listed. */
export const CLIENT_TOOLS: Tool[] = [
  {
    name: 'test_sampling',
    description: 'Conformance fixture: asks the client to sample an LLM with `prompt`.',
    inputSchema: {
      type: 'object',
      properties: { prompt: { type: 'string' } },
      required: ['prompt'],
    },
  },
  ...Object.keys(ELICITATIONS).map((name) => ({
    name,
    description: `Conformance fixture: an elicitation (${name.slice('test_elicitation_'.length)}).`,
    inputSchema: { type: 'object' as const, properties: {} },
  })),
];

/** Registers the tools of `CLIENT_TOOLS` on `server`. */
export function registerClientTools(server: McpServer, ctx: FixtureContext): void {
  server.registerTool(
    'test_sampling',
    { inputSchema: z.object({ prompt: z.string() }) },
    async ({ prompt }, extra) => {
      const answer = await ask(ctx, extra, 'sampling/createMessage', {
        messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
        maxTokens: 100,
      });
      if ('error' in answer) return answer.error;
      const parsed = CreateMessageResultSchema.safeParse(answer.result);
      if (!parsed.success) return failure('The client answered no sampling result');
      const content = parsed.data.content;
      const text = content.type === 'text' ? content.text : JSON.stringify(content);
      return { content: [{ type: 'text', text: `LLM response: ${text}` }] };
    },
  );
  const elicit = async (
    message: string,
    schema: Record<string, unknown>,
    extra: Extra,
  ): Promise<CallToolResult> => {
    if (!ctx.session.elicitation) return failure('This client did not declare elicitation');
    const answer = await ask(ctx, extra, 'elicitation/create', {
      message,
      requestedSchema: schema,
    });
    if ('error' in answer) return answer.error;
    const parsed = ElicitResultSchema.safeParse(answer.result);
    if (!parsed.success) return failure('The client answered no elicitation result');
    const { action, content } = parsed.data;
    const text = `Elicitation completed: action=${action}, content=${JSON.stringify(content ?? {})}`;
    return { content: [{ type: 'text', text }] };
  };
  for (const [name, { message, schema }] of Object.entries(ELICITATIONS)) {
    server.registerTool(name, {}, (extra) => elicit(message, schema, extra));
  }
}

/** What the fixtures read of the SDK's request extra. */
interface Extra {
  requestId: string | number;
  signal: AbortSignal;
}

/**
 * Sends `method` to the client on the call's own stream and waits for its answer, which comes
 * on another POST (`PendingAnswers`): the answer's `result`, or a tool error saying why not.
 */
async function ask(
  ctx: FixtureContext,
  extra: Extra,
  method: string,
  params: Record<string, unknown>,
): Promise<{ result: unknown } | { error: CallToolResult }> {
  const { id, answer } = ctx.pending.ask(ANSWER_TIMEOUT_MS, extra.signal);
  answer.catch(() => undefined); // read below; a send that throws leaves it unread
  const request: JSONRPCRequest = { jsonrpc: '2.0', id, method, params };
  await ctx.send(request, extra.requestId);
  try {
    const message = await answer;
    if (isJSONRPCErrorResponse(message)) {
      return { error: failure(`The client refused ${method}: ${message.error.message}`) };
    }
    return { result: message.result };
  } catch (err) {
    return { error: failure((err as Error).message) };
  }
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
