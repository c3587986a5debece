import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { TaskState } from '@a2a-js/sdk';
import {
  A2AError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import {
  idempotencyKeySchema,
  isTerminal,
  Problem,
  type A2APushTarget,
  type TaskHandle,
  type TaskStatus,
} from '@longrun/core';
import {
  StoreFullError,
  StoreUnavailableError,
  type OpenWatch,
  type TaskEngine,
} from '@longrun/engine';
import type { Logger } from 'pino';
import { invalidProblem, submitProblem } from '../http/outcomes.js';
import { agentCard } from './card.js';
import { callerOf, type Caller } from './caller.js';
import { follow } from './follow.js';
import { messageBody } from './message.js';
import { a2aTask, interrupted, rejectedTask, streamUpdates } from './task-mapping.js';

/** A2A's default and largest `ListTasks` page. */
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

/** The engine status whose tasks can map to an A2A state (a list filter); REJECTED: none. */
const STATUS_OF_STATE = new Map<TaskState, TaskStatus>([
  [TaskState.TASK_STATE_SUBMITTED, 'working'],
  [TaskState.TASK_STATE_WORKING, 'working'],
  [TaskState.TASK_STATE_INPUT_REQUIRED, 'input_required'],
  [TaskState.TASK_STATE_COMPLETED, 'completed'],
  [TaskState.TASK_STATE_FAILED, 'failed'],
  [TaskState.TASK_STATE_CANCELED, 'cancelled'],
]);

/** What a message led to: a task to follow, or a start the engine refused. */
type Begun = { handle: TaskHandle } | { rejected: Task };

/**
 * The A2A door's request handler, behind the SDK's JSON-RPC and REST transports: every method is
 * one or two `TaskEngine` calls for the caller's tenant, mapped with core's `toA2ATask` (`a2aTask`). It keeps nothing
 * between calls (no task store, event bus or executor of the SDK's), so any API replica answers
 * any call, and a task started through any door is the same task here. Decision 35 says why the
 * SDK's `DefaultRequestHandler` is not used.
 * @example jsonRpcHandler({ requestHandler: new EngineRequestHandler(engine, logger), userBuilder: Caller.of })
 */
export class EngineRequestHandler implements A2ARequestHandler {
  constructor(
    private readonly engine: TaskEngine,
    private readonly logger?: Logger,
  ) {}

  /** The card the transports check versions and capabilities against (URLs are relative). */
  async getAgentCard(): Promise<AgentCard> {
    return agentCard('', this.engine.knownJobTypes);
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new UnsupportedOperationError('This agent has no extended agent card');
  }

  /**
   * Starts a task (`{type, input, ttlMs?}`) or answers one (`{input}` on `message.taskId`), then
   * waits until it ends or asks for input, unless `configuration.returnImmediately`.
   */
  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    try {
      const caller = callerOf(context);
      const begun = await this.begin(caller, params);
      if ('rejected' in begun) return begun.rejected;
      let task = a2aTask(begun.handle);
      if (params.configuration?.returnImmediately || interrupted(task)) return task;
      const watch = await this.engine.watch(caller.tenant, task.id);
      if (watch.kind === 'notFound') return task; // forgotten or expired meanwhile
      for await (const handle of follow(watch, caller.signal)) {
        task = a2aTask(handle);
        if (interrupted(task)) break;
      }
      return task;
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** As `sendMessage`, streamed: the task, then its changes until it ends or asks for input. */
  async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      const caller = callerOf(context);
      const begun = await this.begin(caller, params);
      if ('rejected' in begun) {
        yield { payload: { $case: 'task', value: begun.rejected } };
        return;
      }
      const watch = await this.engine.watch(caller.tenant, begun.handle.taskId);
      if (watch.kind === 'notFound') {
        yield { payload: { $case: 'task', value: a2aTask(begun.handle) } };
        return;
      }
      yield* this.stream(watch, caller, { throughInput: false });
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** A task's changes from now until it ends, through any input requests (SubscribeToTask). */
  async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      const caller = callerOf(context);
      const watch = await this.engine.watch(caller.tenant, params.id);
      if (watch.kind === 'notFound') throw notFound(params.id);
      const status = watch.first?.handle.status;
      if (status && isTerminal(status)) {
        throw new UnsupportedOperationError(`Task ${params.id} is ${status}: nothing will change`);
      }
      yield* this.stream(watch, caller, { throughInput: true });
    } catch (err) {
      throw this.failure(err);
    }
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    try {
      const outcome = await this.engine.get(callerOf(context).tenant, params.id);
      if (outcome.kind === 'notFound') throw notFound(params.id);
      return a2aTask(outcome.task);
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** Cancels through the engine (the running handler is aborted); terminal: not cancelable. */
  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    try {
      const outcome = await this.engine.cancel(callerOf(context).tenant, params.id);
      if (outcome.kind === 'notFound') throw notFound(params.id);
      if (outcome.kind === 'conflict') {
        throw new TaskNotCancelableError(`Task ${params.id} is ${outcome.status}`);
      }
      return a2aTask(outcome.task);
    } catch (err) {
      throw this.failure(err);
    }
  }

  /**
   * The tenant's tasks, newest first, a page of the engine's list: `contextId` (a task's own id
   * here) picks that task, `status` and `statusTimestampAfter` filter the page, `pageToken` is the
   * engine's cursor. `totalSize` counts the page only (the engine's index does not count).
   */
  async listTasks(
    params: ListTasksRequest,
    context: ServerCallContext,
  ): Promise<ListTasksResponse> {
    try {
      const tenant = callerOf(context).tenant;
      const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
        throw new RequestMalformedError(`pageSize must be between 1 and ${MAX_PAGE_SIZE}`);
      }
      const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : NaN;
      if (params.statusTimestampAfter && Number.isNaN(after)) {
        throw new RequestMalformedError('statusTimestampAfter must be an ISO 8601 time');
      }
      const state = params.status ?? TaskState.TASK_STATE_UNSPECIFIED;
      const status = STATUS_OF_STATE.get(state);
      const filtered = state !== TaskState.TASK_STATE_UNSPECIFIED;
      const keep = (task: Task) =>
        (!filtered || task.status?.state === state) &&
        (Number.isNaN(after) || Date.parse(task.status?.timestamp ?? '') >= after);
      const page = (tasks: Task[], nextPageToken: string): ListTasksResponse => {
        const kept = tasks.filter(keep);
        return { tasks: kept, nextPageToken, pageSize, totalSize: kept.length };
      };
      if (filtered && status === undefined) return page([], '');
      if (params.contextId) {
        const one = await this.engine.get(tenant, params.contextId);
        return page(one.kind === 'found' ? [a2aTask(one.task)] : [], '');
      }
      const outcome = await this.engine.list(tenant, {
        limit: String(pageSize),
        ...(status ? { status } : {}),
        ...(params.pageToken ? { cursor: params.pageToken } : {}),
        ...(params.includeArtifacts ? { view: 'full' } : {}),
      });
      if (outcome.kind === 'invalid')
        throw new RequestMalformedError(describe(invalidProblem(outcome)));
      return page(
        outcome.tasks.map((t) => a2aTask(t)),
        outcome.nextCursor ?? '',
      );
    } catch (err) {
      throw this.failure(err);
    }
  }

  /**
   * Gives the task its push notification config: each status change from now on is POSTed to
   * `url` as the A2A task, by the engine's webhook delivery (outbox, retries, the URL checked now
   * and every address again before connecting). A task keeps one config: one of the same id (the
   * task's id when none is given) replaces it, another is refused (delete the first).
   */
  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    try {
      return await this.setPush(callerOf(context), params.taskId, pushConfigBody(params));
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** The task's config of that id; none: `TaskNotFoundError`, as A2A asks. */
  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    try {
      const outcome = await this.engine.pushConfig(callerOf(context).tenant, params.taskId);
      if (outcome.kind === 'notFound') throw notFound(params.taskId);
      if (outcome.config?.id !== params.id) {
        throw new TaskNotFoundError(
          `Task ${params.taskId} has no push notification config "${params.id}"`,
        );
      }
      return configOf(params.taskId, outcome.config);
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** The task's configs: none or one (a task keeps one), on one page. */
  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    try {
      const outcome = await this.engine.pushConfig(callerOf(context).tenant, params.taskId);
      if (outcome.kind === 'notFound') throw notFound(params.taskId);
      const configs = outcome.config ? [configOf(params.taskId, outcome.config)] : [];
      return { configs, nextPageToken: '' };
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** Deletes the config (nothing more is sent to it); deleting one that is not there is not an error. */
  async deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    try {
      const outcome = await this.engine.deletePushConfig(
        callerOf(context).tenant,
        params.taskId,
        params.id,
      );
      if (outcome.kind === 'notFound') throw notFound(params.taskId);
    } catch (err) {
      throw this.failure(err);
    }
  }

  /**
   * A message on no task starts one; on a task, answers its input request. A push notification
   * config in `configuration` is the new task's from its start, or is given to the task answered
   * before the answer (so the changes the answer causes are sent to it).
   */
  private async begin(caller: Caller, params: SendMessageRequest): Promise<Begun> {
    const message = params.message;
    if (!message?.messageId) throw new RequestMalformedError('message.messageId is required');
    const push = params.configuration?.taskPushNotificationConfig;
    if (!message.taskId) return this.start(caller, message, push && pushConfigBody(push));
    if (push) await this.setPush(caller, message.taskId, pushConfigBody(push));
    return this.answer(caller, message);
  }

  /** Sets the task's push notification config (see `createTaskPushNotificationConfig`). */
  private async setPush(
    caller: Caller,
    taskId: string,
    body: Record<string, unknown>,
  ): Promise<TaskPushNotificationConfig> {
    const outcome = await this.engine.setPushConfig(caller.tenant, taskId, body);
    switch (outcome.kind) {
      case 'set':
        return configOf(taskId, outcome.config);
      case 'notFound':
        throw notFound(taskId);
      case 'invalid':
        throw new RequestMalformedError(describe(invalidProblem(outcome)));
      case 'pushTaken':
        throw new UnsupportedOperationError(
          `Task ${taskId} has push notification config "${outcome.configId}", and takes one: ` +
            'delete it first, or give its id to replace it',
        );
      case 'hasCallback':
        throw new UnsupportedOperationError(
          `Task ${taskId} was started with a "callback" (longrun webhooks), and takes no push ` +
            'notification config',
        );
    }
  }

  /**
   * Submits the message's body. Its `messageId` is the submit's idempotency key, so a client
   * that sends the same message again (a retry) gets the same task, not a second one.
   */
  private async start(caller: Caller, message: Message, pushConfig?: unknown): Promise<Begun> {
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
    const outcome = await this.engine.submit(caller.tenant, parsed.body, {
      idempotencyKey: key.success ? key.data : undefined,
      requestId: caller.requestId,
      pushConfig,
    });
    if (outcome.kind === 'created' || outcome.kind === 'replayed') return { handle: outcome.task };
    const problem = submitProblem(outcome, this.engine.retryAfter);
    const detail =
      outcome.kind === 'keyReused'
        ? `messageId ${message.messageId} was sent before with a different body`
        : describe(problem);
    return { rejected: rejectedTask(message.contextId, detail, problem.toJSON()) };
  }

  /** Answers the task's input request with the message's `{input}`. */
  private async answer(caller: Caller, message: Message): Promise<Begun> {
    const id = message.taskId;
    const parsed = messageBody(message, '{"input": {…}}');
    if (!parsed.ok) throw new RequestMalformedError(parsed.detail);
    const outcome = await this.engine.answer(caller.tenant, id, parsed.body);
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

  /**
   * A watch as stream events: the task first, then per change its new artifacts and status,
   * until the task ends (or, unless `throughInput`, asks for input) or the caller goes away.
   */
  private async *stream(
    watch: OpenWatch,
    caller: Caller,
    { throughInput }: { throughInput: boolean },
  ): AsyncGenerator<StreamResponse, void, undefined> {
    let previous: Task | undefined;
    for await (const handle of follow(watch, caller.signal, caller.keepAlive)) {
      const task = a2aTask(handle);
      if (previous) yield* streamUpdates(previous, task);
      else yield { payload: { $case: 'task', value: task } };
      previous = task;
      if (!throughInput && interrupted(task)) return;
    }
  }

  /**
   * What a failed call answers: A2A errors as they are, an unreachable or full Redis as an
   * internal error saying so, anything else logged and answered without its details.
   */
  private failure(err: unknown): Error {
    if (err instanceof A2AError) return err;
    if (err instanceof StoreUnavailableError) {
      return new A2AError('The task store (Redis) is not answering; retry shortly');
    }
    if (err instanceof StoreFullError) return new A2AError('The task store is full; retry later');
    this.logger?.error({ err }, 'A2A call failed');
    return new A2AError('Internal error');
  }
}

function notFound(id: string): Error {
  return new TaskNotFoundError(`Task not found: ${id}`);
}

/**
 * A config as the engine takes it (`a2aPushConfigSchema`): what the SDK's defaults leave empty
 * is left out, so an empty token sends no header and an empty id names the task's config.
 */
function pushConfigBody(config: TaskPushNotificationConfig): Record<string, unknown> {
  const { id, url, token, authentication } = config;
  return {
    ...(id ? { id } : {}),
    url,
    ...(token ? { token } : {}),
    ...(authentication && (authentication.scheme || authentication.credentials)
      ? {
          authentication: {
            scheme: authentication.scheme,
            credentials: authentication.credentials,
          },
        }
      : {}),
  };
}

/** The A2A config a task keeps. */
function configOf(taskId: string, target: A2APushTarget): TaskPushNotificationConfig {
  return {
    tenant: '',
    id: target.id,
    taskId,
    url: target.url,
    token: target.token ?? '',
    authentication: target.authentication,
  };
}

/** A problem as one line: its detail, then each field error. */
function describe(problem: Problem): string {
  const detail = problem.detail ?? problem.title;
  const errors = problem.errors ?? [];
  return errors.length === 0
    ? detail
    : `${detail}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`;
}
