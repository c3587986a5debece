import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { Problem } from '@longrun/core';

/** Most accepted keys remembered (there are as many as configured keys, unless they change). */
const ACCEPTED_MAX = 1024;

/**
 * Bearer keys mapped to tenants. A presented key is hashed and compared against every known key
 * in constant time, so neither the match nor its position leaks through timing. A key once
 * accepted is remembered, so its next requests skip the hash: the answer (200 or 401) already
 * tells its holder that it is valid, and a miss takes the constant-time path as before.
 */
export class ApiKeys {
  private readonly entries: { digest: Buffer; tenant: string }[];
  private readonly accepted = new Map<string, string>();

  /** @example new ApiKeys(new Map([['s3cret-key-of-16+', 'acme']])) */
  constructor(keys: ReadonlyMap<string, string>) {
    this.entries = [...keys].map(([key, tenant]) => ({ digest: digest(key), tenant }));
  }

  /** Every tenant that has a key. */
  get tenants(): string[] {
    return [...new Set(this.entries.map((e) => e.tenant))];
  }

  /** The tenant owning `key`, or `null`. */
  tenantFor(key: string): string | null {
    const known = this.accepted.get(key);
    if (known !== undefined) return known;
    const presented = digest(key);
    let found: string | null = null;
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, presented)) found = entry.tenant;
    }
    if (found !== null) {
      if (this.accepted.size >= ACCEPTED_MAX) this.accepted.clear();
      this.accepted.set(key, found);
    }
    return found;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

const BEARER = /^Bearer\s+(\S{1,512})\s*$/i;

/** The tenant of a request's `Authorization: Bearer <key>`, or `null` (what `requireTenant` refuses). */
export function bearerTenant(keys: ApiKeys, header: string | undefined): string | null {
  const match = BEARER.exec(header ?? '');
  return match?.[1] ? keys.tenantFor(match[1]) : null;
}

/**
 * Requires `Authorization: Bearer <key>` of a tenant; puts the tenant in `res.locals.tenant`.
 * An HTTP worker's key (`workers`) is known but refused here: `403`, not `401`.
 */
export function requireTenant(keys: ApiKeys, workers?: ApiKeys) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const header = req.headers.authorization ?? '';
    const match = BEARER.exec(header);
    const tenant = match?.[1] ? keys.tenantFor(match[1]) : null;
    if (!tenant) {
      if (match?.[1] && workers?.tenantFor(match[1])) {
        throw forbidden('A worker key cannot use the task routes: send a tenant key');
      }
      throw unauthorized(match !== null);
    }
    res.locals.tenant = tenant;
    next();
  };
}

/**
 * Requires the bearer key of an HTTP worker (`LONGRUN_WORKER_KEYS`); puts its name in
 * `res.locals.worker`. A tenant's key is known but refused here: `403`.
 */
export function requireWorker(workers: ApiKeys, tenants: ApiKeys) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const match = BEARER.exec(req.headers.authorization ?? '');
    const worker = match?.[1] ? workers.tenantFor(match[1]) : null;
    if (!worker) {
      if (match?.[1] && tenants.tenantFor(match[1])) {
        throw forbidden(
          'A tenant key cannot use the worker routes: send a worker key (LONGRUN_WORKER_KEYS)',
        );
      }
      throw unauthorized(match !== null);
    }
    res.locals.worker = worker;
    next();
  };
}

function unauthorized(presented: boolean): Problem {
  return new Problem({
    status: 401,
    title: 'Unauthorized',
    detail: presented ? 'The bearer key is not valid' : 'Send Authorization: Bearer <key>',
    code: 'unauthorized',
    headers: { 'WWW-Authenticate': 'Bearer realm="longrun"' },
  });
}

function forbidden(detail: string): Problem {
  return new Problem({ status: 403, title: 'Forbidden', detail, code: 'wrong-key' });
}
