import type { QueuedMessage } from '@modelcontextprotocol/sdk/experimental/tasks';
import {
  McpError,
  RELATED_TASK_META_KEY,
  type JSONRPCMessage,
  type RequestId,
  type Result,
} from '@modelcontextprotocol/sdk/types.js';
import { isTerminal, type TaskHandle } from '@longrun/core';
import type { TaskEngine } from '@longrun/engine';
import type { Logger } from 'pino';
import { answerElicitation } from './answers.js';
import type { EngineMessageQueue } from './engine-message-queue.js';
import { TASK_NOT_FOUND } from './errors.js';
import type { McpSession } from './session.js';
import { elicitationRequest, readSideChannelId } from './side-channel.js';
import { elicitationOf, inputKeyOf, toolResultOf } from './task-views.js';
import { Wakeup } from './wakeup.js';

export interface TaskResultDeps {
  engine: TaskEngine;
  tenant: string;
  session: McpSession;
  queue: EngineMessageQueue;
  /** Writes a message on the response stream of the request `relatedRequestId` (the transport). */
  send(message: JSONRPCMessage, relatedRequestId: RequestId): Promise<void>;
  logger?: Logger | undefined;
  /** Re-reads this often without a wake-up (a lost notification costs this much latency). */
  heartbeatMs?: number | undefined;
}

/** What the SDK hands a request handler that this one reads. */
interface HandlerExtra {
  signal: AbortSignal;
  requestId: RequestId;
}

/**
 * `tasks/result` (2025-11-25): holds until the task is terminal and answers its tool result
 * (with the related-task `_meta`). Meanwhile, on this request's stream, it delivers the task's
 * side channel: while the task is `input_required` it sends `elicitation/create` for the open
 * input request (to a client that declared form elicitation), and it applies the client's
 * answers, which any replica put in the task's Redis message queue, to the engine (the job
 * resumes). It replaces the SDK's handler, which polls at the poll interval and resolves answers
 * in the memory of the process that sent the request (so on one replica only).
 */
export function taskResultHandler(deps: TaskResultDeps) {
  return async (request: { params: { taskId: string } }, extra: HandlerExtra): Promise<Result> => {
    const { engine, tenant } = deps;
    const taskId = request.params.taskId;
    const wake = new Wakeup();
    const off = engine.messages.subscribe(taskId, () => wake.fire());
    let offered: string | null = null; // the input request sent on this stream
    let muted: string | null = null; // one the client could not take as an elicitation
    let note: string | undefined; // why the last answer was refused
    try {
      for (;;) {
        if (extra.signal.aborted) throw new McpError(-32000, 'Request cancelled');
        const found = await engine.get(tenant, taskId);
        if (found.kind !== 'found') throw new McpError(TASK_NOT_FOUND.code, TASK_NOT_FOUND.message);
        const task = found.task;
        const queued = await deps.queue.dequeueAll(taskId);
        if (queued.length > 0) {
          for (const message of queued) {
            if ((await deliver(message, task)) === 'reoffer') offered = null;
          }
          continue; // read the task again: an answer may have moved it on
        }
        if (isTerminal(task.status)) {
          const finished = await engine.result(tenant, taskId);
          if (finished.kind !== 'finished') {
            throw new McpError(TASK_NOT_FOUND.code, TASK_NOT_FOUND.message);
          }
          return {
            ...toolResultOf(finished.result),
            _meta: { [RELATED_TASK_META_KEY]: { taskId } },
          };
        }
        const key = inputKeyOf(task);
        const params = elicitationOf(task);
        if (key && params && deps.session.elicitation && offered !== key && muted !== key) {
          await deps.send(elicitationRequest(taskId, key, params, note), extra.requestId);
          offered = key;
          note = undefined;
        }
        await wake.wait(deps.heartbeatMs ?? 15_000, extra.signal);
      }
    } finally {
      off();
    }

    /** One queued message: an answer is applied, anything else is sent on this stream. */
    async function deliver(queued: QueuedMessage, task: TaskHandle): Promise<'done' | 'reoffer'> {
      if (queued.type === 'request' || queued.type === 'notification') {
        await deps.send(queued.message, extra.requestId);
        return 'done';
      }
      const asked = readSideChannelId(queued.message.id);
      // An answer to an input request that is no longer open (answered elsewhere, superseded).
      if (!asked || asked.taskId !== taskId || asked.inputKey !== inputKeyOf(task)) return 'done';
      if (queued.type === 'error') {
        // The client could not take it (no elicitation handler, a schema it cannot render): do
        // not ask it again on this stream; the task waits for an answer from elsewhere.
        deps.logger?.info({ taskId, error: queued.message.error }, 'elicitation refused by client');
        muted = asked.inputKey;
        return 'done';
      }
      const outcome = await answerElicitation(engine, tenant, taskId, queued.message.result);
      if (outcome.kind !== 'refused') return 'done';
      note = `The previous answer was refused: ${outcome.error.message}`;
      return 'reoffer';
    }
  };
}
