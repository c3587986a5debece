import { randomUUID } from 'node:crypto';
import {
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCErrorResponse,
  type JSONRPCResultResponse,
} from '@modelcontextprotocol/sdk/types.js';

/** A client's answer to one of the profile's own requests (sampling, elicitation). */
export type ClientAnswer = JSONRPCResultResponse | JSONRPCErrorResponse;

const PREFIX = 'longrun-fixture:';

/**
 * The conformance profile's requests to a client that wait for its answer. The door builds a
 * server per HTTP request (decision 34), so the client's answer to `sampling/createMessage` or
 * `elicitation/create` arrives on another POST, at another server: this map, one per API
 * process, hands it to the call waiting for it. In this process's memory, so the answer must
 * reach the replica that asked (the suite talks to one); the job-type path keeps its input
 * requests in Redis instead (`side-channel.ts`).
 */
export class PendingAnswers {
  readonly #waiting = new Map<string, (answer: ClientAnswer) => void>();

  /** A fresh request id, and the answer to it (rejected after `timeoutMs` or on `signal`). */
  ask(timeoutMs: number, signal: AbortSignal): { id: string; answer: Promise<ClientAnswer> } {
    const id = `${PREFIX}${randomUUID()}`;
    const answer = new Promise<ClientAnswer>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', gone);
        this.#waiting.delete(id);
      };
      const gone = () => {
        done();
        reject(new Error('The call ended before the client answered'));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`The client did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      signal.addEventListener('abort', gone, { once: true });
      this.#waiting.set(id, (message) => {
        done();
        resolve(message);
      });
    });
    return { id, answer };
  }

  /** Whether a posted message answers one of the profile's requests (taken here if so). */
  take(message: unknown): boolean {
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return false;
    if (typeof message.id !== 'string' || !message.id.startsWith(PREFIX)) return false;
    this.#waiting.get(message.id)?.(message);
    return true;
  }
}
