import type { Message, SendMessageRequest } from '@a2a-js/sdk';
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { idempotencyKeySchema, isTerminal, type TaskHandle } from '@longrun/core';
import type { AnswerOutcome, TaskEngine } from '@longrun/engine';
import { invalidProblem, submitProblem } from '../http/outcomes.js';
import type { Caller } from './caller.js';
import { describe, notFound, refusal } from './errors.js';
import { checkMessage, messageBody, textBody } from './message.js';
import { pushConfigBody, setPush } from './push-config.js';
import { traceparentIn } from '../http/trace-context.js';

/** What a message led to: a task to follow (a start the engine refused throws). */
export interface Begun {
  handle: TaskHandle;
}

/**
 * What `SendMessage` does before it follows the task: a message on no task starts one; on a
 * task, answers its input request. A push notification config in `configuration` is the new
 * task's from its start, or is given to the task answered before the answer (so the changes the
 * answer causes are sent to it).
 * @example const begun = await begin(engine, caller, params)
 */
export async function begin(
  engine: TaskEngine,
  caller: Caller,
  params: SendMessageRequest,
  defaultSkill?: string,
): Promise<Begun> {
  const message = params.message;
  if (!message?.messageId) throw new RequestMalformedError('message.messageId is required');
  checkMessage(message);
  if (message.contextId.length > MAX_CONTEXT_ID) {
    throw new RequestMalformedError(`contextId is longer than ${MAX_CONTEXT_ID} characters`);
  }
  const push = params.configuration?.taskPushNotificationConfig;
  if (!message.taskId) {
    const traceparent = traceparentIn(message.metadata, params.metadata);
    return start(engine, caller, message, push && pushConfigBody(push), defaultSkill, traceparent);
  }
  if (message.contextId) await sameContext(engine, caller.tenant, message);
  if (push) await setPush(engine, caller.tenant, message.taskId, pushConfigBody(push));
  return answer(engine, caller, message);
}

/**
 * Submits the message's body. Its `messageId` is the submit's idempotency key, so a client
 * that sends the same message again (a retry) gets the same task, not a second one.
 */
async function start(
  engine: TaskEngine,
  caller: Caller,
  message: Message,
  pushConfig: unknown,
  defaultSkill: string | undefined,
  traceparent: string | undefined,
): Promise<Begun> {
  const parsed =
    textBody(message, engine.knownJobTypes, defaultSkill) ??
    messageBody(message, '{"type", "input", "ttlMs"?}');
  if (!parsed.ok) throw parsed.error;
  const key = idempotencyKeySchema.safeParse(`a2a:${message.messageId}`);
  const outcome = await engine.submit(caller.tenant, parsed.body, {
    idempotencyKey: key.success ? key.data : undefined,
    requestId: caller.requestId,
    pushConfig,
    traceparent,
    // The client's context is kept with the task (its A2A contextId); none: the task's id.
    contextId: message.contextId || undefined,
  });
  if (outcome.kind === 'created' || outcome.kind === 'replayed') return { handle: outcome.task };
  // Refused: an error, never a task that then does not exist (issue 32).
  const problem = submitProblem(outcome, engine.retryAfter);
  const detail =
    outcome.kind === 'keyReused'
      ? `messageId ${message.messageId} was sent before with a different body`
      : describe(problem);
  throw refusal(problem, detail, caller.binding);
}

/** Answers the task's input request with the message's `{input}`. */
async function answer(engine: TaskEngine, caller: Caller, message: Message): Promise<Begun> {
  const id = message.taskId;
  const parsed = messageBody(message, '{"input": {…}}');
  // A message the task cannot take: say first whether the task takes messages at all.
  const outcome = parsed.ok
    ? await engine.answer(caller.tenant, id, parsed.body)
    : await stateFor(engine, caller.tenant, id, parsed.error);
  switch (outcome.kind) {
    case 'answered':
      return { handle: outcome.task };
    case 'notFound':
      throw notFound(id);
    case 'conflict':
      throw new UnsupportedOperationError(
        isTerminal(outcome.status)
          ? `Task ${id} is ${outcome.status} and cannot be modified`
          : outcome.reason === 'questionChanged'
            ? `Task ${id} was answered meanwhile and asks another question: get the task and answer that`
            : `Task ${id} is ${outcome.status}: it takes a message only while input-required`,
      );
    case 'invalid':
      throw new RequestMalformedError(describe(invalidProblem(outcome)));
  }
}

/** Longest `contextId` kept (a client's own identifier, stored with the task). */
const MAX_CONTEXT_ID = 256;

/**
 * Refuses a message on a task whose `contextId` is not the task's (A2A: agents "MUST reject
 * messages containing mismatching `contextId` and `taskId`"), as invalid params.
 */
async function sameContext(engine: TaskEngine, tenant: string, message: Message): Promise<void> {
  const found = await engine.get(tenant, message.taskId);
  if (found.kind === 'notFound') throw notFound(message.taskId);
  const context = found.task.contextId ?? found.task.taskId;
  if (context !== message.contextId) {
    throw new RequestMalformedError(
      `contextId ${message.contextId} is not task ${message.taskId}'s (${context})`,
    );
  }
}

/** For a message with no answer in it: the task's conflict if it takes none, else `error`. */
async function stateFor(
  engine: TaskEngine,
  tenant: string,
  id: string,
  error: Error,
): Promise<AnswerOutcome> {
  const found = await engine.get(tenant, id);
  if (found.kind === 'notFound') return found;
  const status = found.task.status;
  if (status !== 'input_required') {
    const reason = isTerminal(status) ? 'terminal' : 'notAwaitingInput';
    return { kind: 'conflict', reason, status };
  }
  throw error;
}
