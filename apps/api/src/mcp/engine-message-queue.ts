import type { QueuedMessage, TaskMessageQueue } from '@modelcontextprotocol/sdk/experimental/tasks';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { TaskEngine } from '@longrun/engine';

/**
 * The SDK's `TaskMessageQueue` in Redis, through the engine's per-task side channel
 * (`engine.messages`), for one tenant: a message queued on one replica is taken on another, and
 * survives a restart until the task expires. Session ids are ignored, as in `EngineTaskStore`:
 * a task's messages are its tenant's.
 *
 * The SDK also queues here its answer to any client request whose `_meta` names a related task
 * (`io.modelcontextprotocol/related-task`), e.g. a `ping`. Those go to `reply`, the request's own
 * response stream, instead: the door is stateless, so that POST is where the client waits, and a
 * queued answer was lost (the `tasks/result` side channel takes only answers to its own input
 * requests; a task that is not the tenant's has no queue), leaving the POST open for good.
 */
export class EngineMessageQueue implements TaskMessageQueue {
  constructor(
    private readonly engine: TaskEngine,
    private readonly tenant: string,
    private readonly reply?: (message: JSONRPCMessage) => Promise<void>,
  ) {}

  async enqueue(
    taskId: string,
    message: QueuedMessage,
    _sessionId?: string,
    maxSize?: number,
  ): Promise<void> {
    if (this.reply && (message.type === 'response' || message.type === 'error')) {
      await this.reply(message.message);
      return;
    }
    const outcome = await this.engine.messages.push(
      this.tenant,
      taskId,
      JSON.stringify(message),
      maxSize,
    );
    if (outcome === 'full') throw new Error(`Task message queue overflow (at most ${maxSize})`);
    if (outcome === 'notFound') throw new Error(`Task not found: ${taskId}`);
  }

  async dequeue(taskId: string): Promise<QueuedMessage | undefined> {
    const raw = await this.engine.messages.shift(this.tenant, taskId);
    return raw === null ? undefined : (JSON.parse(raw) as QueuedMessage);
  }

  async dequeueAll(taskId: string): Promise<QueuedMessage[]> {
    const all = await this.engine.messages.drain(this.tenant, taskId);
    return all.map((raw) => JSON.parse(raw) as QueuedMessage);
  }
}
