import type { Message, SendMessageRequest, Task } from '@a2a-js/sdk';
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { idempotencyKeySchema, isTerminal, Problem, type TaskHandle } from '@longrun/core';
import type { TaskEngine } from '@longrun/engine';
import { invalidProblem, submitProblem } from '../http/outcomes.js';
import type { Caller } from './caller.js';
import { describe, notFound } from './errors.js';
import { messageBody } from './message.js';
import { pushConfigBody, setPush } from './push-config.js';
import { rejectedTask } from './task-mapping.js';
import { traceparentIn } from '../http/trace-context.js';

/** What a message led to: a task to follow, or a start the engine refused. */
export type Begun = { handle: TaskHandle } | { rejected: Task };

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
): Promise<Begun> {
  const message = params.message;
  if (!message?.messageId) throw new RequestMalformedError('message.messageId is required');
  const push = params.configuration?.taskPushNotificationConfig;
  if (!message.taskId) {
    const traceparent = traceparentIn(message.metadata, params.metadata);
    return start(engine, caller, message, push && pushConfigBody(push), traceparent);
  }
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
  pushConfig?: unknown,
  traceparent?: string,
): Promise<Begun> {
  const parsed = messageBody(message, '{"type", "input", "ttlMs"?}');
  if (!parsed.ok) {
    const problem = new Problem({
      status: 400,
      title: 'Bad Request',
      detail: parsed.detail,
      code: 'invalid-request',
    });
    return { rejected: rejectedTask(message.contextId, parsed.detail, problem.toJSON()) };
  }
  const key = idempotencyKeySchema.safeParse(`a2a:${message.messageId}`);
  const outcome = await engine.submit(caller.tenant, parsed.body, {
    idempotencyKey: key.success ? key.data : undefined,
    requestId: caller.requestId,
    pushConfig,
    traceparent,
  });
  if (outcome.kind === 'created' || outcome.kind === 'replayed') return { handle: outcome.task };
  const problem = submitProblem(outcome, engine.retryAfter);
  const detail =
    outcome.kind === 'keyReused'
      ? `messageId ${message.messageId} was sent before with a different body`
      : describe(problem);
  return { rejected: rejectedTask(message.contextId, detail, problem.toJSON()) };
}

/** Answers the task's input request with the message's `{input}`. */
async function answer(engine: TaskEngine, caller: Caller, message: Message): Promise<Begun> {
  const id = message.taskId;
  const parsed = messageBody(message, '{"input": {…}}');
  if (!parsed.ok) throw new RequestMalformedError(parsed.detail);
  const outcome = await engine.answer(caller.tenant, id, parsed.body);
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
