import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { Problem, type ProblemCode } from '@longrun/core';
import { StoreFullError, StoreUnavailableError } from '@longrun/engine';
import type { Logger } from 'pino';
import { redactUrl } from './request-log.js';

/**
 * Sends a problem as `application/problem+json` with its headers, on the plain response (so the
 * fast lane and Express answer alike; a HEAD request gets the headers only, as Node and Bun send
 * no body for HEAD).
 */
export function sendProblem(res: ServerResponse, problem: Problem, instance?: string): void {
  for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
  if (problem.retryAfter !== undefined) res.setHeader('Retry-After', String(problem.retryAfter));
  const body = JSON.stringify(problem.toJSON(instance));
  res.statusCode = problem.status;
  res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** The error handler: every error becomes a problem (5xx logged unless a deliberate Problem). */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    answerError(logger, err, req, res);
  };
}

/** What the error handler does, for either door (`originalUrl` is Express's, `url` the lane's). */
export function answerError(
  logger: Logger,
  err: unknown,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const url = (req as Partial<Request>).originalUrl ?? req.url;
  const problem = toProblem(err);
  if (problem.status >= 500 && !(err instanceof Problem)) {
    const level = problem.status === 500 ? 'error' : 'warn';
    logger[level]({ err, method: req.method, url: redactUrl(url ?? '') }, 'request failed');
  }
  if (res.headersSent) {
    res.end();
    return;
  }
  sendProblem(res, problem, url);
}

function toProblem(err: unknown): Problem {
  if (err instanceof Problem) return err;
  if (err instanceof StoreUnavailableError) {
    return new Problem({
      status: 503,
      title: 'Service Unavailable',
      detail: 'The task store (Redis) is not answering; retry shortly',
      code: 'store-unavailable',
      retryAfter: 2,
    });
  }
  if (err instanceof StoreFullError) {
    return new Problem({
      status: 507,
      title: 'Insufficient Storage',
      detail: 'The task store is full; retry later',
      code: 'store-full',
      retryAfter: 30,
    });
  }
  const bodyError = bodyParserProblem(err);
  if (bodyError) return bodyError;
  const clientError = exposedClientError(err);
  if (clientError) return clientError;
  return new Problem({ status: 500, title: 'Internal Server Error', code: 'internal' });
}

/** body-parser's error `type`s as problems; any other of its types is `unreadable-request`. */
const BODY_PARSER_PROBLEMS = new Map<string, [ProblemCode, string, string]>([
  ['entity.too.large', ['entity-too-large', 'Content Too Large', 'The body is larger than 1 MiB']],
  ['entity.parse.failed', ['entity-parse-failed', 'Bad Request', 'The body is not valid JSON']],
  [
    'charset.unsupported',
    ['charset-unsupported', 'Unsupported Media Type', 'Send the body as UTF-8 JSON'],
  ],
  [
    'encoding.unsupported',
    ['encoding-unsupported', 'Unsupported Media Type', 'Unsupported Content-Encoding'],
  ],
  ['request.aborted', ['request-aborted', 'Bad Request', 'The request was aborted']],
  [
    'request.size.invalid',
    ['request-size-invalid', 'Bad Request', 'The body length does not match Content-Length'],
  ],
]);
const UNREADABLE_BODY: [ProblemCode, string, string] = [
  'unreadable-request',
  'Bad Request',
  'The body could not be read',
];

/** body-parser's errors carry an HTTP status and a `type`. */
function bodyParserProblem(err: unknown): Problem | null {
  if (typeof err !== 'object' || err === null) return null;
  const { status, type } = err as { status?: unknown; type?: unknown };
  if (typeof status !== 'number' || status < 400 || status >= 500 || typeof type !== 'string') {
    return null;
  }
  // Every code the API sends has a page at /problems: body-parser's rarer types share one.
  const [code, title, detail] = BODY_PARSER_PROBLEMS.get(type) ?? UNREADABLE_BODY;
  return new Problem({ status, title, detail, code });
}

/**
 * Errors Express and its parsers mark as the client's fault (`status` 4xx, `expose: true`): a
 * body that does not decode under its Content-Encoding, a malformed percent-escape in the path.
 */
function exposedClientError(err: unknown): Problem | null {
  if (typeof err !== 'object' || err === null) return null;
  const { status, statusCode, expose } = err as {
    status?: unknown;
    statusCode?: unknown;
    expose?: unknown;
  };
  const code = typeof status === 'number' ? status : statusCode;
  if (typeof code !== 'number' || code < 400 || code >= 500 || expose === false) return null;
  if (err instanceof URIError) {
    return new Problem({
      status: 400,
      title: 'Bad Request',
      detail: 'Malformed URL encoding',
      code: 'bad-url',
    });
  }
  return new Problem({
    status: code,
    title: code === 400 ? 'Bad Request' : 'Client Error',
    detail: 'The request could not be read',
    code: 'unreadable-request',
  });
}

/** 404 for any route that does not exist. */
export function notFound(req: Request, _res: Response, next: NextFunction): void {
  next(
    new Problem({
      status: 404,
      title: 'Not Found',
      detail: `No route for ${req.method} ${req.path}`,
      code: 'no-route',
    }),
  );
}
