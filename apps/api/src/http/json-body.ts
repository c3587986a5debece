import type { IncomingMessage } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { Problem } from '@longrun/core';

/** Largest request body accepted. */
export const BODY_LIMIT = '1mb';
const BODY_LIMIT_BYTES = 1024 * 1024;

/** Deepest nesting accepted; deeper JSON would overflow recursive serialisers further on. */
export const MAX_DEPTH = 64;

const PARSE = { strict: true, type: () => true } as const;
const parseDefault = express.json({ ...PARSE, limit: BODY_LIMIT });

/**
 * Parses an `application/json` body (415 otherwise, 413 above 1 MiB, or above `limitBytes`:
 * an HTTP worker's completion carries a result up to `LONGRUN_MAX_RESULT_BYTES`). With
 * `optional`, an empty body is allowed and reads as `{}`.
 */
export function jsonBody({ optional = false, limitBytes = BODY_LIMIT_BYTES } = {}) {
  const parseJson =
    limitBytes === BODY_LIMIT_BYTES ? parseDefault : express.json({ ...PARSE, limit: limitBytes });
  const limitText = limitBytes === BODY_LIMIT_BYTES ? '1 MiB' : `${limitBytes} bytes`;
  return (req: Request, res: Response, next: NextFunction): void => {
    const length = Number(req.headers['content-length'] ?? 0);
    const hasBody = length > 0 || req.headers['transfer-encoding'] !== undefined;
    if (!hasBody && optional) {
      req.body = {};
      next();
      return;
    }
    if (length > limitBytes) {
      // Answer at once instead of reading (and discarding) a body we already know is too big.
      res.setHeader('Connection', 'close');
      throw new Problem({
        status: 413,
        title: 'Content Too Large',
        detail: `The body is larger than ${limitText}`,
        code: 'entity-too-large',
      });
    }
    if (!isJson(req, hasBody)) {
      throw new Problem({
        status: 415,
        title: 'Unsupported Media Type',
        detail: 'Send the body as application/json',
        code: 'unsupported-media-type',
      });
    }
    // Sent as it is, in UTF-8 (nearly every body): read here, else by body-parser.
    const plain = length > 0 && plainUtf8(req);
    const parsed = (err?: unknown) => {
      if (err) return next(err);
      // Each level takes two bytes at least (`[` and `]`): a short plain body is not walked.
      const short = plain && length < 2 * (MAX_DEPTH + 1);
      if (!short && depthExceeds(req.body, MAX_DEPTH)) return next(tooDeep());
      next();
    };
    if (plain) readJson(req, length, parsed);
    else parseJson(req, res, parsed);
  };
}

/**
 * Reads and parses a body of `length` bytes sent as it is (no Content-Encoding) in UTF-8: what
 * nearly every client sends, read here without body-parser's stream and decoder layers (a tenth
 * of a submit's CPU on Bun: docs/BENCHMARKS.md). Same outcomes as body-parser's strict JSON:
 * a byte order mark is skipped, anything but an object or an array is `entity.parse.failed`, a
 * body shorter than its length `request.size.invalid`, an aborted one `request.aborted` (the
 * error handler turns each into its problem). Everything else goes through body-parser.
 */
function readJson(req: Request, length: number, done: (err?: unknown) => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;
  const finish = (err?: unknown) => {
    if (finished) return;
    finished = true;
    req
      .off('data', onData)
      .off('end', onEnd)
      .off('error', finish)
      .off('aborted', onAborted)
      .off('close', onAborted);
    done(err);
  };
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    received += chunk.length;
  };
  const onAborted = () => finish(bodyError(400, 'request.aborted', 'request aborted'));
  const onEnd = () => {
    if (received !== length) {
      return finish(bodyError(400, 'request.size.invalid', 'request size did not match length'));
    }
    let text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString();
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const first = FIRST_CHAR.exec(text)?.[1];
    try {
      if (first !== '{' && first !== '[') throw new SyntaxError('not an object or an array');
      req.body = JSON.parse(text) as unknown;
    } catch {
      return finish(bodyError(400, 'entity.parse.failed', 'the body is not valid JSON'));
    }
    finish();
  };
  // A client gone before the end: 'aborted' on Node, 'close' (before 'end') on either runtime.
  req
    .on('data', onData)
    .on('end', onEnd)
    .on('error', finish)
    .on('aborted', onAborted)
    .on('close', onAborted);
}

/** The first character that is not JSON whitespace. */
const FIRST_CHAR = /^[ \t\n\r]*([^ \t\n\r])/;

/** An error as body-parser makes them: an HTTP status and a `type` the error handler knows. */
function bodyError(status: number, type: string, message: string): Error {
  return Object.assign(new Error(message), { status, type, expose: true });
}

/** By Content-Type value, whether it names UTF-8 (or no charset, which means it for JSON). */
const utf8Types = new Map<string, boolean>();

/** A body sent as it is, in UTF-8, with its length given. */
function plainUtf8(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  if (req.headers['transfer-encoding'] !== undefined) return false;
  const type = req.headers['content-type'] ?? '';
  let utf8 = utf8Types.get(type);
  if (utf8 === undefined) {
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(type)?.[1];
    utf8 = charset === undefined || charset.toLowerCase() === 'utf-8';
    if (utf8Types.size < 256) utf8Types.set(type, utf8);
  }
  return utf8;
}

/** `req.is('application/json')` by Content-Type value: clients send the same few values. */
const jsonTypes = new Map<string, boolean>();

function isJson(req: IncomingMessage, hasBody: boolean): boolean {
  const type = req.headers['content-type'];
  // Without a body `req.is` answers null whatever the type: ask it, and remember nothing.
  if (!hasBody || type === undefined) return isJsonType(req);
  let json = jsonTypes.get(type);
  if (json === undefined) {
    json = isJsonType(req);
    if (jsonTypes.size < 256) jsonTypes.set(type, json);
  }
  return json;
}

/** Express's `req.is('application/json')`, on a request of either door (it reads the headers). */
function isJsonType(req: IncomingMessage): boolean {
  return Boolean(
    (express.request.is as (this: IncomingMessage, t: string) => unknown).call(
      req,
      'application/json',
    ),
  );
}

/**
 * For the fast lane: reads the body of a POST that `jsonBody()` would read itself (a plain UTF-8
 * JSON body of known length) and calls `done` as
 * `jsonBody()` calls `next`, with `req.body` set; `false`, reading nothing, for any other body
 * (Express then takes the request whole).
 */
export function readPlainJson(req: IncomingMessage, done: (err?: unknown) => void): boolean {
  const length = Number(req.headers['content-length'] ?? 0);
  const type = req.headers['content-type'];
  if (!(length > 0 && length <= BODY_LIMIT_BYTES) || type === undefined) return false;
  if (!isJson(req, true) || !plainUtf8(req)) return false;
  readJson(req as Request, length, (err?: unknown) => {
    if (err) return done(err);
    const short = length < 2 * (MAX_DEPTH + 1);
    done(!short && depthExceeds((req as Request).body, MAX_DEPTH) ? tooDeep() : undefined);
  });
  return true;
}

function tooDeep(): Problem {
  return new Problem({
    status: 400,
    title: 'Bad Request',
    detail: `The body is nested deeper than ${MAX_DEPTH} levels`,
    code: 'too-deep',
  });
}

/** Whether `value` nests objects/arrays deeper than `limit`; iterative, so any depth is safe. */
export function depthExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
