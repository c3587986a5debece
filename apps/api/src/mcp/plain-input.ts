import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { TaskHandle } from '@longrun/core';
import type { TaskEngine } from '@longrun/engine';
import { answerElicitation } from './answers.js';
import type { EngineMessageQueue } from './engine-message-queue.js';
import { elicitationRequest, readSideChannelId } from './side-channel.js';
import { elicitationOf, inputKeyOf } from './task-views.js';
import { Wakeup } from './wakeup.js';

export interface PlainInputDeps {
  engine: TaskEngine;
  tenant: string;
  queue: EngineMessageQueue;
  /** Writes a message on the call's own response stream. */
  send(message: JSONRPCMessage): Promise<void>;
  /** Re-reads the task this often without a wake-up (it may be answered elsewhere). */
  heartbeatMs?: number | undefined;
}

/** How asking ended: answered (here or elsewhere), or the client cannot take the request. */
export type AskOutcome = 'answered' | 'refused' | 'gone';

/**
 * Asks the client of a plain `tools/call` (no Tasks, form elicitation declared) for a short
 * task's open input request: `elicitation/create` on the call's own stream, its id naming the
 * task and request (`side-channel.ts`), so the answer, posted to any replica, lands in the task's
 * Redis message queue, where this call takes it and answers the task (`answerElicitation`: the
 * engine validates it; a refused answer is asked again with why). The same side channel
 * `tasks/result` serves, for a client that did not declare Tasks (decision 67).
 * @example await askForInput(deps, handle, extra.signal) // 'answered'
 */
export async function askForInput(
  deps: PlainInputDeps,
  handle: TaskHandle,
  signal: AbortSignal,
): Promise<AskOutcome> {
  const { engine, tenant } = deps;
  const taskId = handle.taskId;
  const key = inputKeyOf(handle);
  const params = elicitationOf(handle);
  if (!key || !params) return 'answered';
  const wake = new Wakeup();
  const off = engine.messages.subscribe(taskId, () => wake.fire());
  try {
    await deps.send(elicitationRequest(taskId, key, params));
    for (;;) {
      if (signal.aborted) return 'gone';
      for (const queued of await deps.queue.dequeueAll(taskId)) {
        if (queued.type === 'request' || queued.type === 'notification') continue;
        const asked = readSideChannelId(queued.message.id);
        if (!asked || asked.taskId !== taskId || asked.inputKey !== key) continue;
        // The client could not take it (no handler, a schema it cannot render).
        if (queued.type === 'error') return 'refused';
        const outcome = await answerElicitation(engine, tenant, taskId, queued.message.result);
        if (outcome.kind !== 'refused') return 'answered';
        const note = `The previous answer was refused: ${outcome.error.message}`;
        await deps.send(elicitationRequest(taskId, key, params, note));
      }
      // Answered elsewhere meanwhile (HTTP, longrun_answer_task), cancelled or gone.
      const found = await engine.get(tenant, taskId);
      if (found.kind !== 'found' || inputKeyOf(found.task) !== key) return 'answered';
      await wake.wait(deps.heartbeatMs ?? 2_000, signal);
    }
  } finally {
    off();
  }
}
