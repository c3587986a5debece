import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import {
  ErrorCode,
  McpError,
  type Request,
  type RequestId,
  type Result,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { TaskHandle } from '@longrun/core';
import type { TaskEngine } from '@longrun/engine';
import { submitError, TASK_NOT_FOUND } from './errors.js';
import { clampTtl, statusMessageOf, toolResultOf } from './task-views.js';
import { traceparentIn } from '../http/trace-context.js';

export interface EngineTaskStoreOptions {
  /** `LONGRUN_MAX_TTL_MS`: a requested ttl above it is clamped to it. */
  maxTtlMs: number;
  /** Travels with each task submitted here into the worker's logs. */
  requestId?: string | undefined;
}

/**
 * The SDK's `TaskStore` over the engine, for one tenant (one is made per request, for the tenant
 * of its bearer key). Nothing is kept in memory: a task is a longrun task, visible through every
 * door with the same id, on every replica, after a restart. The SDK's `sessionId` arguments are
 * ignored: a task belongs to its tenant, whatever session created it (decision 34), and another
 * tenant's task is not found, exactly like a missing one.
 *
 * Statuses change only through the engine: a worker completes or fails a task, a cancel cancels
 * it; `storeTaskResult` and status changes other than `cancelled` are refused.
 */
export class EngineTaskStore implements TaskStore {
  constructor(
    private readonly engine: TaskEngine,
    private readonly tenant: string,
    private readonly opts: EngineTaskStoreOptions,
  ) {}

  /**
   * Submits the `tools/call` request as a task of the job type it names (a call with
   * `params.task`: plain calls never reach the SDK, see `routeToolCalls`).
   */
  async createTask(params: CreateTaskOptions, _id: RequestId, request: Request): Promise<Task> {
    const call = (request.params ?? {}) as {
      name?: unknown;
      arguments?: unknown;
      task?: unknown;
      _meta?: unknown;
    };
    const ttlMs = clampTtl(params.ttl, this.opts.maxTtlMs);
    const outcome = await this.engine.submit(
      this.tenant,
      { type: call.name, input: call.arguments ?? {}, ...(ttlMs === undefined ? {} : { ttlMs }) },
      { requestId: this.opts.requestId, traceparent: traceparentIn(call._meta) },
    );
    if (outcome.kind !== 'created' && outcome.kind !== 'replayed') {
      const error = submitError(outcome);
      throw new McpError(error.code, error.message, error.data);
    }
    return sdkTask(outcome.task);
  }

  async getTask(taskId: string): Promise<Task | null> {
    const outcome = await this.engine.get(this.tenant, taskId);
    return outcome.kind === 'found' ? sdkTask(outcome.task) : null;
  }

  storeTaskResult(): Promise<void> {
    return Promise.reject(new Error('A longrun task is finished by its worker, not by the door'));
  }

  /** The finished task's tool result (a failed or cancelled job is `isError: true`). */
  async getTaskResult(taskId: string): Promise<Result> {
    const outcome = await this.engine.result(this.tenant, taskId);
    if (outcome.kind === 'finished') return toolResultOf(outcome.result);
    if (outcome.kind === 'notFound')
      throw new McpError(TASK_NOT_FOUND.code, TASK_NOT_FOUND.message);
    throw new McpError(ErrorCode.InvalidRequest, `The task is ${outcome.status}: no result yet`);
  }

  /** Only `cancelled` (the SDK's `tasks/cancel`): the engine cancels the task wherever it runs. */
  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    if (status !== 'cancelled') {
      throw new McpError(
        ErrorCode.InvalidRequest,
        'A longrun task changes status through its worker',
      );
    }
    const outcome = await this.engine.cancel(this.tenant, taskId);
    if (outcome.kind === 'cancelled') return;
    if (outcome.kind === 'notFound')
      throw new McpError(TASK_NOT_FOUND.code, TASK_NOT_FOUND.message);
    throw new McpError(
      ErrorCode.InvalidParams,
      `Cannot cancel task in terminal status: ${outcome.status}`,
    );
  }

  /** The tenant's tasks, newest first, a page of 20 (the engine's cursor). */
  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const outcome = await this.engine.list(this.tenant, cursor === undefined ? {} : { cursor });
    if (outcome.kind === 'invalid')
      throw new Error(outcome.errors.map((e) => e.message).join('; '));
    return {
      tasks: outcome.tasks.map(sdkTask),
      ...(outcome.nextCursor === null ? {} : { nextCursor: outcome.nextCursor }),
    };
  }
}

/**
 * The engine's handle as a 2025-11-25 `Task` (`ttl`, `pollInterval`; a failed task's message in
 * `statusMessage`).
 */
export function sdkTask(handle: TaskHandle): Task {
  return {
    taskId: handle.taskId,
    status: handle.status,
    statusMessage: statusMessageOf(handle),
    createdAt: handle.createdAt,
    lastUpdatedAt: handle.lastUpdatedAt,
    ttl: handle.ttlMs,
    pollInterval: handle.pollIntervalMs,
  };
}
