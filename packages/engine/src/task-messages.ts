import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { TaskEvents } from './task-events.js';
import type { TaskKeys } from './keys.js';
import { drainTaskMessages } from './commands/drain-task-messages.js';
import { pushTaskMessage } from './commands/push-task-message.js';
import { shiftTaskMessage } from './commands/shift-task-message.js';

/** What `push` did: `notFound` also covers another tenant's task (never told apart). */
export type PushOutcome = 'queued' | 'notFound' | 'full';

/** Most messages one task's side channel holds unless the caller says otherwise. */
export const DEFAULT_MAX_TASK_MESSAGES = 100;

/**
 * A task's side channel for the protocol doors: a FIFO of JSON messages per task
 * (`<prefix>:messages:<id>`, a Redis list expiring with the task) that any API replica can append
 * to and take from, for one tenant at a time. A push wakes whoever waits on the task (it is
 * announced on the task's own event channel, so `subscribe` hears task changes and pushes alike).
 * The MCP door keeps its SDK task message queue here: an answer to an `elicitation/create`
 * posted to one replica reaches the `tasks/result` call waiting on another.
 */
export class TaskMessages {
  constructor(
    private readonly connection: Redis,
    private readonly keys: TaskKeys,
    private readonly events: TaskEvents,
    private readonly redis: <T>(operation: () => Promise<T>) => Promise<T>,
  ) {}

  /**
   * Appends `message` to the task's channel unless it already holds `max` (0: no bound).
   * @example await messages.push('acme', taskId, JSON.stringify({ type: 'response', message }))
   */
  async push(
    tenant: string,
    id: string,
    message: string,
    max = DEFAULT_MAX_TASK_MESSAGES,
  ): Promise<PushOutcome> {
    const reply = await this.redis(() =>
      pushTaskMessage.run(this.connection, {
        keys: this.channelKeys(id),
        args: { tenant, message, max, channel: this.keys.eventsChannel + id },
      }),
    );
    if (reply.kind === 'ok') return 'queued';
    return reply.kind === 'full' ? 'full' : 'notFound';
  }

  /** Takes the oldest message, or `null` (none, or not the tenant's task). */
  async shift(tenant: string, id: string): Promise<string | null> {
    const reply = await this.redis(() =>
      shiftTaskMessage.run(this.connection, { keys: this.channelKeys(id), args: { tenant } }),
    );
    return reply.kind === 'ok' ? reply.message : null;
  }

  /** Takes every message, oldest first (`[]` for none, or not the tenant's task). */
  async drain(tenant: string, id: string): Promise<string[]> {
    const reply = await this.redis(() =>
      drainTaskMessages.run(this.connection, { keys: this.channelKeys(id), args: { tenant } }),
    );
    return reply.kind === 'ok' ? reply.messages : [];
  }

  /**
   * The keys every side-channel script takes: the task's record (its owner), its list, and the
   * call's own key, named afresh for each call: a call ioredis sends again after a reconnect
   * (its reply lost) carries the same name, and answers what it did the first time.
   */
  private channelKeys(id: string): { task: string; messages: string; op: string } {
    const k = this.keys;
    return { task: k.task(id), messages: k.messages(id), op: k.messageOp(id, randomUUID()) };
  }

  /**
   * Calls `listener` whenever the task changes or a message is pushed to it (and once the
   * subscription is live); returns the function that stops it. Wake-ups only: read after each.
   */
  subscribe(id: string, listener: () => void): () => void {
    return this.events.on(id, listener);
  }
}
