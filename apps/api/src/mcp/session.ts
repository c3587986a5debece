import { randomBytes } from 'node:crypto';

/**
 * A 2025-11-25 session as the door needs it on any replica: what the client said at `initialize`
 * that later requests depend on. Nothing else: the tenant comes from the bearer key on every
 * request, and tasks belong to tenants, not sessions (decision 34).
 */
export interface McpSession {
  /** The client accepts `elicitation/create` in form mode (so input requests are sent to it). */
  elicitation: boolean;
  /**
   * The client declared the `tasks` capability: long tools are listed to it as
   * `taskSupport: "required"`. One that did not sees them `optional` (its library would refuse to
   * call a required one) and gets a handle from a plain call (issue 32).
   */
  tasks: boolean;
}

/** `lr1.<128 random bits>.<e|-><t|->`; ids minted before the tasks flag have one letter. */
const SESSION_ID = /^lr1\.[A-Za-z0-9_-]{22}\.([e-])([t-])?$/;

/**
 * Mints a session id for an `initialize` request's client capabilities. The id carries the
 * session (so every replica, and a restarted one, reads it without a store) and 128 random bits
 * (so two sessions never share one). Forging one gains nothing: it grants no access, and only
 * says what its own client accepts.
 * @example mintSession({ elicitation: {}, tasks: {} }) // 'lr1.q3…Zg.et'
 */
export function mintSession(capabilities: unknown): string {
  const flags = `${acceptsFormElicitation(capabilities) ? 'e' : '-'}${declaresTasks(capabilities) ? 't' : '-'}`;
  return `lr1.${randomBytes(16).toString('base64url')}.${flags}`;
}

/** The session an `Mcp-Session-Id` names, or null when it is not one the door mints. */
export function readSession(id: string): McpSession | null {
  const match = SESSION_ID.exec(id);
  // An id minted before the tasks flag was given to a client every long tool was required of.
  return match ? { elicitation: match[1] === 'e', tasks: match[2] !== '-' } : null;
}

/** `capabilities.tasks` is an object (2025-11-25: the client takes part in tasks). */
function declaresTasks(capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const tasks = (capabilities as { tasks?: unknown }).tasks;
  return typeof tasks === 'object' && tasks !== null;
}

/** `capabilities.elicitation` is `{}` (form, 2025-06-18 style) or names `form`. */
function acceptsFormElicitation(capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const elicitation = (capabilities as { elicitation?: unknown }).elicitation;
  if (typeof elicitation !== 'object' || elicitation === null) return false;
  return Object.keys(elicitation).length === 0 || 'form' in elicitation;
}
