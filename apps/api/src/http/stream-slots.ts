import { readFileSync } from 'node:fs';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Problem } from '@longrun/core';

/** How many long-lived requests may be open at once; 0: no cap. */
export interface StreamLimits {
  /** Per tenant (`LONGRUN_TENANT_MAX_STREAMS`). */
  perTenant: number;
  /** In this process, all tenants together (`LONGRUN_MAX_STREAMS`). */
  total: number;
}

/** What a refused client is told to wait before trying again, in seconds. */
export const STREAM_RETRY_AFTER_S = 5;

/** The open-file limit assumed where the process's own cannot be read. */
const ASSUMED_FD_LIMIT = 1024;

/**
 * The process's soft limit on open files (`ulimit -n`), read from `/proc/self/limits` (Linux);
 * where that cannot be read, 1024 (the usual soft default), and "unlimited" as a large number.
 */
export function openFileLimit(
  read: () => string = () => readFileSync('/proc/self/limits', 'utf8'),
): number {
  try {
    const line = read()
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    if (soft === 'unlimited') return Number.MAX_SAFE_INTEGER;
    const limit = Number(soft);
    return Number.isInteger(limit) && limit > 0 ? limit : ASSUMED_FD_LIMIT;
  } catch {
    return ASSUMED_FD_LIMIT;
  }
}

/**
 * The default caps for a process allowed `fdLimit` open files: streams may take half of them
 * (at most 10 000), so the other half stays for Redis, health checks and short requests; one
 * tenant at most a quarter of that (at most 100), so others keep room. Under `ulimit -n 400`:
 * 200 and 50.
 * @example defaultStreamLimits(1024) // { total: 512, perTenant: 100 }
 */
export function defaultStreamLimits(fdLimit: number = openFileLimit()): StreamLimits {
  return streamLimits({}, fdLimit);
}

/**
 * The caps in force: the configured ones (`LONGRUN_MAX_STREAMS`, `LONGRUN_TENANT_MAX_STREAMS`;
 * 0: no cap), the defaults for what is unset (the tenant's from the total in force).
 * @example streamLimits({ perTenant: 20 }, 400) // { total: 200, perTenant: 20 }
 */
export function streamLimits(
  configured: { total?: number | undefined; perTenant?: number | undefined },
  fdLimit: number = openFileLimit(),
): StreamLimits {
  const total = configured.total ?? Math.max(4, Math.min(10_000, Math.floor(fdLimit / 2)));
  const perTenant =
    configured.perTenant ?? (total > 0 ? Math.max(1, Math.min(100, Math.floor(total / 4))) : 100);
  return { total, perTenant };
}

/** A slot taken: `release` gives it back (once, however often it is called). */
export interface StreamSlot {
  release(): void;
}

/**
 * The open long-lived requests of this API process (event streams, blocking MCP `tasks/result`,
 * the MCP GET stream, A2A streams and blocking sends), counted per tenant and in all. One
 * counter for every door, in memory: the resource it guards (sockets, file descriptors) is the
 * process's, so each replica counts its own (decision 50).
 */
export class StreamSlots {
  private readonly byTenant = new Map<string, number>();
  private total = 0;

  constructor(readonly limits: StreamLimits) {}

  /** Open streams: of `tenant`, or of every tenant. */
  open(tenant?: string): number {
    return tenant === undefined ? this.total : (this.byTenant.get(tenant) ?? 0);
  }

  /** A slot for `tenant`, or which cap refuses it. */
  take(tenant: string): StreamSlot | { refused: 'tenant' | 'total' } {
    const mine = this.byTenant.get(tenant) ?? 0;
    const { perTenant, total } = this.limits;
    if (perTenant > 0 && mine >= perTenant) return { refused: 'tenant' };
    if (total > 0 && this.total >= total) return { refused: 'total' };
    this.byTenant.set(tenant, mine + 1);
    this.total += 1;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.total -= 1;
        const left = (this.byTenant.get(tenant) ?? 1) - 1;
        if (left > 0) this.byTenant.set(tenant, left);
        else this.byTenant.delete(tenant);
      },
    };
  }
}

/**
 * Middleware holding a stream slot for the request's tenant (`res.locals.tenant`: mount it after
 * authentication) while its response is open: given back on `close`, which Node emits however
 * the response ends (finished, the client gone, the server closing its connections). Past a cap:
 * `429 too-many-streams` with `Retry-After`, before anything else is done. `isStream` picks the
 * requests that are long-lived (default: all that reach it).
 * @example router.get('/v1/jobs/:id/events', ...before, holdStream(slots), serve)
 */
export function holdStream(
  slots: StreamSlots,
  isStream: (req: Request) => boolean = () => true,
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!isStream(req)) return next();
    const tenant = res.locals.tenant as string;
    const slot = slots.take(tenant);
    if ('refused' in slot) return next(tooManyStreams(slots.limits, slot.refused));
    res.once('close', () => slot.release());
    next();
  };
}

function tooManyStreams(limits: StreamLimits, refused: 'tenant' | 'total'): Problem {
  return new Problem({
    status: 429,
    title: 'Too many open streams',
    detail:
      refused === 'tenant'
        ? `This tenant has ${limits.perTenant} streams open on this API process (LONGRUN_TENANT_MAX_STREAMS)`
        : `This API process has ${limits.total} streams open (LONGRUN_MAX_STREAMS)`,
    code: 'too-many-streams',
    retryAfter: STREAM_RETRY_AFTER_S,
  });
}
