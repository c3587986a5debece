import type { Request } from 'express';
import type { ServerCallContext, User } from '@a2a-js/sdk/server';
import { REST_PATH } from './card.js';
import type { Binding } from './errors.js';

/**
 * Who makes an A2A call: the tenant the bearer key belongs to (set by `requireTenant`, never by
 * the request's own `tenant` field or path), and a signal that aborts when the request's
 * connection closes, so a blocking send or a stream stops following its task when the client
 * has gone, and a way to keep an idle stream open. The SDK hands it to the request handler as
 * the call context's `user`.
 */
export class Caller implements User {
  constructor(
    readonly tenant: string,
    readonly signal: AbortSignal,
    readonly requestId: string | undefined,
    /** Keeps an idle event stream open through proxies (an SSE comment); elsewhere a no-op. */
    readonly keepAlive: () => void = () => undefined,
    /** The binding the call came over: a refusal's error differs between them. */
    readonly binding: Binding = 'jsonrpc',
  ) {}

  get isAuthenticated(): boolean {
    return true;
  }

  get userName(): string {
    return this.tenant;
  }

  /** The SDK transports' `userBuilder`: the caller of an authenticated request. */
  static async of(req: Request): Promise<Caller> {
    const res = req.res;
    const tenant = res?.locals.tenant as string | undefined;
    if (!res || tenant === undefined) {
      throw new Error('A2A request without a tenant: mount the A2A routes behind requireTenant');
    }
    const closed = new AbortController();
    res.once('close', () => closed.abort());
    // Only once the SDK has started an event stream: a comment line, which A2A clients skip.
    const keepAlive = () => {
      const type = String(res.getHeader('content-type') ?? '');
      if (res.headersSent && !res.writableEnded && type.startsWith('text/event-stream')) {
        res.write(': ping\n\n');
      }
    };
    const binding = req.baseUrl.endsWith(REST_PATH) ? 'rest' : 'jsonrpc';
    const requestId = res.locals.requestId as string | undefined;
    return new Caller(tenant, closed.signal, requestId, keepAlive, binding);
  }
}

/** The caller of a call the SDK dispatched to the request handler. */
export function callerOf(context: ServerCallContext): Caller {
  const user = context.user;
  if (user instanceof Caller) return user;
  throw new Error('A2A call without a caller: the transports must use Caller.of');
}
