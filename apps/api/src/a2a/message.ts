import type { Message } from '@a2a-js/sdk';
import { depthExceeds, MAX_DEPTH } from '../http/json-body.js';

/** What a message asks for: a body for the engine, or why there is none. */
export type MessageBody = { ok: true; body: unknown } | { ok: false; detail: string };

/**
 * The body a message carries, by the door's one rule: a message has one data part, and its data
 * is the body the HTTP API takes (`{type, input, ttlMs?, …}` to start a task, `{input}` to answer
 * one). Text and file parts beside it are ignored.
 * @example messageBody(message) // { ok: true, body: { type: 'echo', input: {} } }
 */
export function messageBody(message: Message, expected: string): MessageBody {
  const data = message.parts.flatMap((part) =>
    part.content?.$case === 'data' ? [part.content.value as unknown] : [],
  );
  if (data.length !== 1) {
    return {
      ok: false,
      detail: `The message carries ${data.length} data parts; send one whose data is ${expected}`,
    };
  }
  const [body] = data;
  // The HTTP door refuses such bodies before parsing them further; so does this one.
  if (depthExceeds(body, MAX_DEPTH)) {
    return { ok: false, detail: `The data part is nested deeper than ${MAX_DEPTH} levels` };
  }
  return { ok: true, body };
}
