import { setTimeout as sleep } from 'node:timers/promises';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** A 1×1 red PNG and a short silent WAV: the smallest valid content of their kinds. */
export const RED_PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
const SILENT_WAV = 'UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==';

/** The tool whose listing shows JSON Schema 2020-12 keywords kept as given (SEP-1613). */
export const JSON_SCHEMA_TOOL = 'json_schema_2020_12_tool';

/** The call the door answers as JSON rather than an event stream (decision 67). */
export const RECONNECTION_TOOL = 'test_reconnection';

/** Fixture results that are MCP content shapes, not job results (decision 67). */
const RESULTS: Record<string, CallToolResult> = {
  test_image_content: { content: [{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }] },
  test_audio_content: { content: [{ type: 'audio', data: SILENT_WAV, mimeType: 'audio/wav' }] },
  test_embedded_resource: {
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  },
  test_multiple_content_types: {
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: JSON.stringify({ test: 'data', value: 123 }),
        },
      },
    ],
  },
  [JSON_SCHEMA_TOOL]: { content: [{ type: 'text', text: 'Arguments received' }] },
  [RECONNECTION_TOOL]: { content: [{ type: 'text', text: 'Reconnection test completed' }] },
};

const NO_ARGUMENTS = { type: 'object' as const, properties: {} };

/** The content fixtures as listed, the JSON Schema 2020-12 one with its schema verbatim. */
export const CONTENT_TOOLS: Tool[] = [
  ...Object.keys(RESULTS)
    .filter((name) => name !== JSON_SCHEMA_TOOL)
    .map((name) => ({
      name,
      description: `Conformance fixture: ${name.replace(/^test_/, '').replaceAll('_', ' ')}.`,
      inputSchema: NO_ARGUMENTS,
    })),
  {
    name: 'test_tool_with_logging',
    description: 'Conformance fixture: sends three info log messages while it runs.',
    inputSchema: NO_ARGUMENTS,
  },
  {
    name: JSON_SCHEMA_TOOL,
    description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: {
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
      },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
  },
];

/** Registers the tools of `CONTENT_TOOLS` on `server`. */
export function registerContentTools(server: McpServer): void {
  for (const [name, result] of Object.entries(RESULTS)) {
    server.registerTool(name, { inputSchema: z.looseObject({}) }, () => result);
  }
  server.registerTool('test_tool_with_logging', {}, async (extra) => {
    for (const [i, data] of [
      'Tool execution started',
      'Tool processing data',
      'Tool execution completed',
    ].entries()) {
      if (i > 0) await sleep(50);
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', logger: 'longrun', data },
      });
    }
    return { content: [{ type: 'text', text: 'Logged three messages' }] };
  });
}
