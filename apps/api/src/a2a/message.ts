import { Role, type Message } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors';
import type { RegisteredJobType } from '@longrun/engine';
import { depthExceeds, MAX_DEPTH } from '../http/json-body.js';

/** What a message asks for: a body for the engine, or why there is none (an A2A error). */
export type MessageBody = { ok: true; body: unknown } | { ok: false; error: Error };

/**
 * Refuses, as invalid params, a message that is not one: no parts, or no `role` (both are
 * required by A2A's `Message`).
 */
export function checkMessage(message: Message): void {
  if (message.parts.length === 0) {
    throw new RequestMalformedError('message.parts is empty: a message carries at least one part');
  }
  if (message.role !== Role.ROLE_USER && message.role !== Role.ROLE_AGENT) {
    throw new RequestMalformedError('message.role is required (ROLE_USER)');
  }
}

/**
 * The body a message carries, by the door's rule: a message has one data part, and its data
 * is the body the HTTP API takes (`{type, input, ttlMs?, …}` to start a task, `{input}` to answer
 * one). Text and file parts beside it are ignored. No data part: `ContentTypeNotSupportedError`
 * (a text-only start is `textBody`'s).
 * @example messageBody(message) // { ok: true, body: { type: 'echo', input: {} } }
 */
export function messageBody(message: Message, expected: string): MessageBody {
  const data = message.parts.flatMap((part) =>
    part.content?.$case === 'data' ? [part.content.value as unknown] : [],
  );
  if (data.length === 0) {
    return {
      ok: false,
      error: new ContentTypeNotSupportedError(
        `The message carries no data part; send one whose data is ${expected}`,
      ),
    };
  }
  if (data.length > 1) {
    return {
      ok: false,
      error: new RequestMalformedError(
        `The message carries ${data.length} data parts; send one whose data is ${expected}`,
      ),
    };
  }
  const [body] = data;
  // The HTTP door refuses such bodies before parsing them further; so does this one.
  if (depthExceeds(body, MAX_DEPTH)) {
    return {
      ok: false,
      error: new RequestMalformedError(`The data part is nested deeper than ${MAX_DEPTH} levels`),
    };
  }
  return { ok: true, body };
}

/**
 * The start a message of text only (no data part, no file) asks for: the skill it names in
 * `metadata.skill`, else `defaultSkill` (LONGRUN_A2A_DEFAULT_SKILL), started with its text in
 * the input field the job type declared (`textInput`). A skill that takes no text, or none at
 * all: `ContentTypeNotSupportedError`, and no task.
 * @example textBody(message, engine.knownJobTypes, 'echo') // { ok: true, body: { type: 'echo', input: { text: 'hi' } } }
 */
export function textBody(
  message: Message,
  types: readonly RegisteredJobType[],
  defaultSkill: string | undefined,
): MessageBody | undefined {
  const cases = message.parts.map((part) => part.content?.$case);
  if (cases.some((c) => c !== 'text')) return undefined;
  const text = message.parts
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .join('\n\n');
  const named = message.metadata?.skill;
  const skill = typeof named === 'string' && named ? named : defaultSkill;
  const type = skill === undefined ? undefined : types.find((t) => t.name === skill);
  if (!type?.textInput) {
    const why =
      skill === undefined
        ? 'names no skill (metadata.skill) and this agent has no default skill'
        : `names skill "${skill}", which ${type ? 'takes no text' : 'is not served'}`;
    return {
      ok: false,
      error: new ContentTypeNotSupportedError(
        `The message carries text only and ${why}: send one data part ` +
          '{"type": "<skill id>", "input": {…}}',
      ),
    };
  }
  return { ok: true, body: { type: type.name, input: { [type.textInput]: text } } };
}
