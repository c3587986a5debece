import express, { type NextFunction, type Request, type Response } from 'express';
import { Problem } from '@longrun/core';

/** Largest request body accepted. */
export const BODY_LIMIT = '1mb';

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
    if (!req.is('application/json')) {
      throw new Problem({
        status: 415,
        title: 'Unsupported Media Type',
        detail: 'Send the body as application/json',
        code: 'unsupported-media-type',
      });
    }
    parseJson(req, res, next);
  };
}
