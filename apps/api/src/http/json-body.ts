import express, { type NextFunction, type Request, type Response } from 'express';
import { Problem } from '@longrun/core';

/** Largest request body accepted. */
export const BODY_LIMIT = '1mb';
const BODY_LIMIT_BYTES = 1024 * 1024;

/** Deepest nesting accepted; deeper JSON would overflow recursive serialisers further on. */
export const MAX_DEPTH = 64;

const parseJson = express.json({ limit: BODY_LIMIT, strict: true, type: () => true });

/**
 * Parses an `application/json` body (415 otherwise, 413 above 1 MiB). With `optional`, an empty
 * body is allowed and reads as `{}`.
 */
export function jsonBody({ optional = false } = {}) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const length = Number(req.headers['content-length'] ?? 0);
    const hasBody = length > 0 || req.headers['transfer-encoding'] !== undefined;
    if (!hasBody && optional) {
      req.body = {};
      next();
      return;
    }
    if (length > BODY_LIMIT_BYTES) {
      // Answer at once instead of reading (and discarding) a body we already know is too big.
      res.setHeader('Connection', 'close');
      throw new Problem({
        status: 413,
        title: 'Content Too Large',
        detail: 'The body is larger than 1 MiB',
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
    parseJson(req, res, (err?: unknown) => {
      if (err) return next(err);
      if (depthExceeds(req.body, MAX_DEPTH)) {
        return next(
          new Problem({
            status: 400,
            title: 'Bad Request',
            detail: `The body is nested deeper than ${MAX_DEPTH} levels`,
            code: 'too-deep',
          }),
        );
      }
      next();
    });
  };
}

/** `req.is('application/json')` by Content-Type value: clients send the same few values. */
const jsonTypes = new Map<string, boolean>();

function isJson(req: Request, hasBody: boolean): boolean {
  const type = req.headers['content-type'];
  // Without a body `req.is` answers null whatever the type: ask it, and remember nothing.
  if (!hasBody || type === undefined) return Boolean(req.is('application/json'));
  let json = jsonTypes.get(type);
  if (json === undefined) {
    json = Boolean(req.is('application/json'));
    if (jsonTypes.size < 256) jsonTypes.set(type, json);
  }
  return json;
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
