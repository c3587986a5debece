import express, { type ErrorRequestHandler, type RequestHandler, type Router } from 'express';
import { AGENT_CARD_PATH, AgentCard } from '@a2a-js/sdk';
import { A2A_ERROR_CODE, RequestMalformedError, toRestErrorBody } from '@a2a-js/sdk/errors';
import { jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import type { TaskEngine } from '@longrun/engine';
import type { Logger } from 'pino';
import { BODY_LIMIT, depthExceeds, MAX_DEPTH } from '../http/json-body.js';
import { holdStream, type StreamSlots } from '../http/stream-slots.js';
import { agentCard, baseUrlOf, JSONRPC_PATH, REST_PATH } from './card.js';
import { Caller } from './caller.js';
import { EngineRequestHandler } from './request-handler.js';
import { isHeldJsonRpc, isHeldRest } from './held-calls.js';

/**
 * The A2A v1.0 door: the Agent Card at `/.well-known/agent-card.json` (no key: discovery), and
 * the SDK's JSON-RPC (`/a2a/jsonrpc`) and HTTP+JSON (`/a2a/rest`) bindings over
 * `EngineRequestHandler`. `before` (the bearer key's tenant, limits) runs first on everything
 * under `/a2a`, so other paths there are authenticated before the app's 404. A call that stays
 * open while its task runs (a stream, a subscription, a blocking send) holds one of `streams`'
 * slots, or is refused `429` before it starts anything.
 * @example app.use(a2aRouter(engine, [requireTenant(keys)], logger, streams))
 */
export function a2aRouter(
  engine: TaskEngine,
  before: RequestHandler[],
  logger: Logger | undefined,
  streams: StreamSlots,
  defaultSkill?: string,
): Router {
  const router = express.Router();
  const requestHandler = new EngineRequestHandler(engine, logger, defaultSkill);

  router.get(`/${AGENT_CARD_PATH}`, (req, res) => {
    const card = agentCard(baseUrlOf(req), engine.knownJobTypes);
    // Skills follow the registry and URLs the request: revalidate, and keep variants apart.
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Vary', 'Host, X-Forwarded-Host, X-Forwarded-Proto');
    res.json(AgentCard.toJSON(card));
  });

  router.use('/a2a', ...before);
  const bindings = { requestHandler, userBuilder: Caller.of };
  router.use(
    JSONRPC_PATH,
    readBody,
    jsonRpcParseError,
    jsonRpcGuard,
    holdStream(streams, isHeldJsonRpc),
    jsonRpcHandler(bindings),
  );
  router.use(
    REST_PATH,
    readBody,
    restParseError,
    restGuard,
    holdStream(streams, isHeldRest),
    restHandler(bindings),
  );
  return router;
}

/**
 * Reads a JSON body up to the HTTP door's limit (the SDK's own parser would stop at 100 kB and
 * then finds the body read). Other content types are left to the SDK, which refuses them.
 */
const readBody = express.json({
  limit: BODY_LIMIT,
  strict: false,
  type: ['application/json', 'application/a2a+json'],
});

/** Whether body-parser could not parse the JSON (too large and the like go to the app's handler). */
const unparsable = (err: unknown) =>
  (err as { type?: unknown } | null)?.type === 'entity.parse.failed';

/** Invalid JSON on the JSON-RPC binding: a JSON-RPC parse error, as the SDK answers it. */
const jsonRpcParseError: ErrorRequestHandler = (err, _req, res, next) => {
  if (!unparsable(err)) return next(err);
  res.json({
    jsonrpc: '2.0',
    id: null,
    error: { code: A2A_ERROR_CODE.PARSE_ERROR, message: 'Invalid JSON payload.' },
  });
};

/**
 * Deepest body either binding takes: the HTTP door's limit on a whole submit (`MAX_DEPTH`) plus
 * the levels an A2A message adds around the same input (`params.message.parts[i].data`), so an
 * input one door takes the other takes too. Deeper bodies overflowed the SDK's recursive
 * conversions (a `-32603` carrying "Maximum call stack size exceeded").
 */
const A2A_MAX_DEPTH = MAX_DEPTH + 8;

const isValidId = (id: unknown) => id === null || typeof id === 'string' || Number.isInteger(id);

/**
 * Refuses, as JSON-RPC invalid requests (`-32600`, HTTP 200 as the SDK answers them), a body
 * nested deeper than `A2A_MAX_DEPTH`, a request whose `id` is not a string, an integer or null
 * (JSON-RPC 2.0 §4, and the SDK's own rule), and one whose `jsonrpc` is not `"2.0"` or that has
 * no string `method` (§4: the SDK answered those `-32602`). The SDK would refuse such an id too but echo it
 * back, and serialising an id nested thousands deep overflowed the stack (a 500); §5 answers
 * with `id: null` when the id cannot be told.
 */
const jsonRpcGuard: RequestHandler = (req, res, next) => {
  const body = req.body as unknown;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return next();
  const id = 'id' in body ? body.id : null;
  const idOk = isValidId(id);
  const envelope = body as { jsonrpc?: unknown; method?: unknown };
  const fault = !idOk
    ? 'id must be a string, an integer or null'
    : depthExceeds(body, A2A_MAX_DEPTH)
      ? `nested deeper than ${A2A_MAX_DEPTH} levels`
      : envelope.jsonrpc !== '2.0'
        ? '"jsonrpc" must be "2.0"'
        : typeof envelope.method !== 'string'
          ? '"method" must be a string'
          : undefined;
  if (fault === undefined) return next();
  res.json({
    jsonrpc: '2.0',
    id: idOk ? id : null,
    error: { code: A2A_ERROR_CODE.INVALID_REQUEST, message: `Invalid JSON-RPC Request: ${fault}.` },
  });
};

/** A body nested deeper than `A2A_MAX_DEPTH` on the REST binding: 400, as malformed JSON is. */
const restGuard: RequestHandler = (req, res, next) => {
  if (!depthExceeds(req.body, A2A_MAX_DEPTH)) return next();
  const error = new RequestMalformedError(`Body nested deeper than ${A2A_MAX_DEPTH} levels.`);
  res.status(400).json(toRestErrorBody(error, 400));
};

/** Invalid JSON on the REST binding: 400 with the binding's error body, as the SDK answers it. */
const restParseError: ErrorRequestHandler = (err, _req, res, next) => {
  if (!unparsable(err)) return next(err);
  res.status(400).json(toRestErrorBody(new RequestMalformedError('Invalid JSON payload.'), 400));
};
