import type { QueuedMessage, TaskMessageQueue } from '@modelcontextprotocol/sdk/experimental/tasks';
import type { TaskEngine } from '@longrun/engine';

/**
 * The SDK's `TaskMessageQueue` in Redis, through the engine's per-task side channel
 * (`engine.messages`), for one tenant: a message queued on one replica is taken on another, and
 * survives a restart until the task expires. Session ids are ignored, as in `EngineTaskStore`:
 * a task's messages are its tenant's.
 */
export class EngineMessageQueue implements TaskMessageQueue {
  constructor(
    private readonly engine: TaskEngine,
    private readonly tenant: string,
  ) {}

  async enqueue(
    taskId: string,
    message: QueuedMessage,
    _sessionId?: string,
    maxSize?: number,
  ): Promise<void> {
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
