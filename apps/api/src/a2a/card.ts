import { createRequire } from 'node:module';
import type { Request } from 'express';
import type { AgentCard, AgentSkill } from '@a2a-js/sdk';
import type { RegisteredJobType } from '@longrun/engine';

/** Where the JSON-RPC binding is served. */
export const JSONRPC_PATH = '/a2a/jsonrpc';
/** Where the HTTP+JSON (REST) binding is served. */
export const REST_PATH = '/a2a/rest';
/** The security scheme's name in the card. */
const BEARER = 'bearer';

const version = (createRequire(import.meta.url)('../../package.json') as { version: string })
  .version;

/**
 * The Agent Card: the two bindings under `baseUrl`, the bearer key as the one security scheme,
 * streaming and push notifications (several configs per task, sent by the webhook workers:
 * docs/decisions.md, decision 35), and one skill per registered job type (`id` = the type's
 * name). Serve it with `AgentCard.toJSON`.
 * @example AgentCard.toJSON(agentCard('https://jobs.example.com', engine.knownJobTypes))
 */
export function agentCard(baseUrl: string, types: readonly RegisteredJobType[]): AgentCard {
  return {
    name: 'longrun',
    description:
      'Runs long jobs as tasks. Start one with a message carrying one data part ' +
      '{"type": "<skill id>", "input": {…}, "ttlMs"?: n}; answer an input request with a ' +
      'message on the task carrying {"input": {…}}. The task id is the longrun task id ' +
      '(GET /v1/jobs/<id> shows the same task).',
    supportedInterfaces: [
      {
        url: `${baseUrl}${JSONRPC_PATH}`,
        protocolBinding: 'JSONRPC',
        tenant: '',
        protocolVersion: '1.0',
      },
      {
        url: `${baseUrl}${REST_PATH}`,
        protocolBinding: 'HTTP+JSON',
        tenant: '',
        protocolVersion: '1.0',
      },
    ],
    provider: undefined,
    version,
    documentationUrl: `${baseUrl}/docs`,
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extensions: [],
      extendedAgentCard: false,
    },
    securitySchemes: {
      [BEARER]: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: {
            scheme: 'Bearer',
            bearerFormat: '',
            description: 'An API key of this service; the tasks belong to its tenant',
          },
        },
      },
    },
    securityRequirements: [{ schemes: { [BEARER]: { list: [] } } }],
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json', 'text/plain'],
    skills: types.map(skill),
    signatures: [],
  };
}

/**
 * One job type as a skill: what its input schema says it does (its `description`, when the
 * worker gave one), then how to start it, with the input's JSON Schema for the caller.
 */
function skill(type: RegisteredJobType): AgentSkill {
  const about = type.inputSchema.description;
  return {
    id: type.name,
    name: type.name,
    description:
      (typeof about === 'string' ? `${about} ` : '') +
      `Start it with {"type": "${type.name}", "input": …}, the input matching this JSON ` +
      `Schema: ${JSON.stringify(type.inputSchema)}`,
    tags: ['longrun', 'job'],
    examples: [],
    inputModes: ['application/json'],
    outputModes: ['application/json', 'text/plain'],
    securityRequirements: [],
  };
}

/**
 * The base URL the caller reached this API at, for the card's absolute URLs: the
 * `X-Forwarded-Proto`/`X-Forwarded-Host` a proxy in front sets, else the request's own. A caller
 * forging them changes only the card it is sent (the response varies on them).
 */
export function baseUrlOf(req: Request): string {
  const proto = first(req.headers['x-forwarded-proto']);
  const host = first(req.headers['x-forwarded-host']);
  const scheme = proto === 'http' || proto === 'https' ? proto : req.protocol;
  const authority = host && /^[A-Za-z0-9.:[\]-]{1,255}$/.test(host) ? host : req.get('host');
  return `${scheme}://${authority ?? 'localhost'}`;
}

function first(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value?.split(',')[0]?.trim() || undefined;
}
