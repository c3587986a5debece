import { randomBytes } from 'node:crypto';

/**
 * A 2025-11-25 session as the door needs it on any replica: what the client said at `initialize`
 * that later requests depend on. Nothing else: the tenant comes from the bearer key on every
 * request, and tasks belong to tenants, not sessions (decision 34).
 */
export interface McpSession {
  /** The client accepts `elicitation/create` in form mode (so input requests are sent to it). */
  elicitation: boolean;
}

const SESSION_ID = /^lr1\.[A-Za-z0-9_-]{22}\.([e-])$/;

/**
 * Mints a session id for an `initialize` request's client capabilities. The id carries the
 * session (so every replica, and a restarted one, reads it without a store) and 128 random bits
 * (so two sessions never share one). Forging one gains nothing: it grants no access, and only
 * says what its own client accepts.
 * @example mintSession({ elicitation: {} }) // 'lr1.q3…Zg.e'
 */
export function mintSession(capabilities: unknown): string {
  const flag = acceptsFormElicitation(capabilities) ? 'e' : '-';
  return `lr1.${randomBytes(16).toString('base64url')}.${flag}`;
}

/** The session an `Mcp-Session-Id` names, or null when it is not one the door mints. */
export function readSession(id: string): McpSession | null {
  const match = SESSION_ID.exec(id);
  return match ? { elicitation: match[1] === 'e' } : null;
}

/** `capabilities.elicitation` is `{}` (form, 2025-06-18 style) or names `form`. */
function acceptsFormElicitation(capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const elicitation = (capabilities as { elicitation?: unknown }).elicitation;
  if (typeof elicitation !== 'object' || elicitation === null) return false;
  return Object.keys(elicitation).length === 0 || 'form' in elicitation;
}
