import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { McpSession } from '../session.js';
import type { PendingAnswers } from './pending.js';

/** What the conformance fixtures of one request's server need. */
export interface FixtureContext {
  /** What the client declared at `initialize` (elicitation). */
  session: McpSession;
  /** This process's requests to clients awaiting an answer. */
  pending: PendingAnswers;
  /** Sends a message on the stream of the request `relatedRequestId` (the call's own). */
  send(message: JSONRPCMessage, relatedRequestId: string | number): Promise<void>;
}
