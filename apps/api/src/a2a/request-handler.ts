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
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import {
  RequestMalformedError,
  TaskNotCancelableError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { isTerminal } from '@longrun/core';
import type { OpenWatch, TaskEngine } from '@longrun/engine';
import type { Logger } from 'pino';
import { begin } from './begin.js';
import { agentCard } from './card.js';
import { callerOf, type Caller } from './caller.js';
import { a2aFailure, notFound } from './errors.js';
import { follow } from './follow.js';
import { listTasks } from './list-tasks.js';
import { getPush, listPush, pushConfigBody, setPush } from './push-config.js';
import { a2aTask, interrupted, streamUpdates, withHistory } from './task-mapping.js';

/**
 * The A2A door's request handler, behind the SDK's JSON-RPC and REST transports: every method is
 * one or two `TaskEngine` calls for the caller's tenant, mapped with core's `toA2ATask` (`a2aTask`). It keeps nothing
 * between calls (no task store, event bus or executor of the SDK's), so any API replica answers
 * any call, and a task started through any door is the same task here. Decision 35 says why the
 * SDK's `DefaultRequestHandler` is not used. Starting or answering a task is `begin.ts`, the
 * list `list-tasks.ts`, push notification configs `push-config.ts`; errors map in `errors.ts`.
 * @example jsonRpcHandler({ requestHandler: new EngineRequestHandler(engine, logger), userBuilder: Caller.of })
 */
export class EngineRequestHandler implements A2ARequestHandler {
  constructor(
    private readonly engine: TaskEngine,
    private readonly logger?: Logger,
    /** The skill a text-only message naming none starts (LONGRUN_A2A_DEFAULT_SKILL). */
    private readonly defaultSkill?: string,
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
      const begun = await begin(this.engine, caller, params, this.defaultSkill);
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
      throw a2aFailure(err, this.logger);
    }
  }

  /** As `sendMessage`, streamed: the task, then its changes until it ends or asks for input. */
  async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      const caller = callerOf(context);
      const begun = await begin(this.engine, caller, params, this.defaultSkill);
      const watch = await this.engine.watch(caller.tenant, begun.handle.taskId);
      if (watch.kind === 'notFound') {
        yield { payload: { $case: 'task', value: a2aTask(begun.handle) } };
        return;
      }
      yield* stream(watch, caller, { throughInput: false });
    } catch (err) {
      throw a2aFailure(err, this.logger);
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
      yield* stream(watch, caller, { throughInput: true });
    } catch (err) {
      throw a2aFailure(err, this.logger);
    }
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    try {
      const { historyLength } = params;
      if (historyLength !== undefined && !(historyLength >= 0)) {
        throw new RequestMalformedError('historyLength must be 0 or more');
      }
      const outcome = await this.engine.get(callerOf(context).tenant, params.id);
      if (outcome.kind === 'notFound') throw notFound(params.id);
      return withHistory(a2aTask(outcome.task), historyLength);
    } catch (err) {
      throw a2aFailure(err, this.logger);
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
      throw a2aFailure(err, this.logger);
    }
  }

  /** The tenant's tasks, newest first (see `listTasks`). */
  async listTasks(
    params: ListTasksRequest,
    context: ServerCallContext,
  ): Promise<ListTasksResponse> {
    try {
      return await listTasks(this.engine, callerOf(context).tenant, params);
    } catch (err) {
      throw a2aFailure(err, this.logger);
    }
  }

  /**
   * Gives the task a push notification config (see `setPush`): a task keeps several; one of the
   * same id replaces it.
   */
  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    try {
      const body = pushConfigBody(params);
      return await setPush(this.engine, callerOf(context).tenant, params.taskId, body);
    } catch (err) {
      throw a2aFailure(err, this.logger);
    }
  }

  /** The task's config of that id; none: `TaskNotFoundError`, as A2A asks. */
  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    try {
      return await getPush(this.engine, callerOf(context).tenant, params.taskId, params.id);
    } catch (err) {
      throw a2aFailure(err, this.logger);
    }
  }

  /** The task's configs (at most `MAX_PUSH_CONFIGS`), on one page. */
  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    try {
      const configs = await listPush(this.engine, callerOf(context).tenant, params.taskId);
      return { configs, nextPageToken: '' };
    } catch (err) {
      throw a2aFailure(err, this.logger);
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
      throw a2aFailure(err, this.logger);
    }
  }
}

/**
 * A watch as stream events: the task first, then per change its new artifacts and status,
 * until the task ends (or, unless `throughInput`, asks for input) or the caller goes away.
 */
async function* stream(
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
