import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { RED_PIXEL_PNG } from './content-tools.js';

/**
 * The suite's prompts, resources, resource template, completion and subscriptions: MCP features
 * a job queue has no use for, served in the conformance profile only, by the SDK's own handlers
 * (`registerPrompt`, `registerResource`, `completable`), so the protocol is the SDK's.
 */
export function registerCatalog(server: McpServer): void {
  registerPrompts(server);
  server.registerResource(
    'static-text',
    'test://static-text',
    { description: 'Conformance fixture: a text resource', mimeType: 'text/plain' },
    (uri) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'text/plain',
          text: 'This is the content of the static text resource.',
        },
      ],
    }),
  );
  server.registerResource(
    'static-binary',
    'test://static-binary',
    { description: 'Conformance fixture: a binary resource', mimeType: 'image/png' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: RED_PIXEL_PNG }] }),
  );
  server.registerResource(
    'watched-resource',
    'test://watched-resource',
    { description: 'Conformance fixture: a resource to subscribe to', mimeType: 'text/plain' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched.' }] }),
  );
  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'Conformance fixture: a resource template', mimeType: 'application/json' },
    (uri, { id }) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${String(id)}` }),
        },
      ],
    }),
  );
  // Nothing here ever changes, so a subscription is acknowledged and nothing is sent.
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, () => ({}));
  server.server.setRequestHandler(UnsubscribeRequestSchema, () => ({}));
}

function registerPrompts(server: McpServer): void {
  const user = (text: string) => ({
    role: 'user' as const,
    content: { type: 'text' as const, text },
  });
  server.registerPrompt(
    'test_simple_prompt',
    { description: 'Conformance fixture: a prompt without arguments' },
    () => ({ messages: [user('This is a simple prompt for testing.')] }),
  );
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'Conformance fixture: a prompt with two arguments',
      argsSchema: {
        arg1: completable(z.string().describe('First argument'), (value) =>
          ['paris', 'park', 'party'].filter((v) => v.startsWith(value)),
        ),
        arg2: z.string().describe('Second argument'),
      },
    },
    ({ arg1, arg2 }) => ({
      messages: [user(`Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`)],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      description: 'Conformance fixture: a prompt embedding a resource',
      argsSchema: { resourceUri: z.string().describe('URI of the resource to embed') },
    },
    ({ resourceUri }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: {
              uri: resourceUri,
              mimeType: 'text/plain',
              text: 'Embedded resource content for testing.',
            },
          },
        },
        user('Please process the embedded resource above.'),
      ],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_image',
    { description: 'Conformance fixture: a prompt with an image' },
    () => ({
      messages: [
        { role: 'user', content: { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' } },
        user('Please analyze the image above.'),
      ],
    }),
  );
}
