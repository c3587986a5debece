import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { Problem } from '@longrun/core';

/**
 * Guards operator pages with the admin keys (`LONGRUN_ADMIN_KEYS`), compared in constant time.
 * Accepts `Authorization: Bearer <key>` (scripts) or HTTP Basic with the key as password (a
 * browser asks for it), so the queue dashboard works from a plain browser tab.
 */
export function requireAdmin(keys: readonly string[]) {
  const digests = keys.map(digest);
  return (req: Request, _res: Response, next: NextFunction): void => {
    const header = req.headers.authorization ?? '';
    let presented: string | undefined;
    const bearer = /^Bearer\s+(\S+)$/i.exec(header);
    const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
    if (bearer) presented = bearer[1];
    else if (basic?.[1])
      presented = Buffer.from(basic[1], 'base64').toString().split(':').slice(1).join(':');
    let ok = false;
    if (presented) {
      const d = digest(presented);
      for (const known of digests) if (timingSafeEqual(known, d)) ok = true;
    }
    if (!ok) {
      throw new Problem({
        status: 401,
        title: 'Unauthorized',
        detail: 'Admin key required',
        code: 'unauthorized',
        headers: { 'WWW-Authenticate': 'Basic realm="longrun admin", charset="UTF-8"' },
      });
    }
    next();
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
