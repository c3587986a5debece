import type { Redis } from 'ioredis';

type Listener = () => void;

/**
 * Wakes local waiters (SSE streams, long polls) when a task has a new event. One subscriber
 * connection per process serves every waiter, so held requests do not pin a connection each.
 * Notifications are only wake-ups: waiters re-read the task's event stream, which is the truth,
 * so a notification lost during a reconnect costs latency (until the waiter's own re-check), not
 * events.
 */
export class TaskEvents {
  private readonly listeners = new Map<string, Set<Listener>>();

  /** @example const events = new TaskEvents(createRedis(url, 'subscriber'), keys.eventsChannel) */
  constructor(
    private readonly subscriber: Redis,
    private readonly channel: string,
  ) {
    subscriber.on('message', (ch: string, taskId: string) => {
      if (ch !== this.channel) return;
      for (const listener of this.listeners.get(taskId) ?? []) listener();
    });
  }

  async start(): Promise<void> {
    await this.subscriber.subscribe(this.channel);
  }

  /** Calls `listener` on every new event of `taskId`; returns the function that stops it. */
  on(taskId: string, listener: Listener): () => void {
    let set = this.listeners.get(taskId);
    if (!set) this.listeners.set(taskId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(taskId);
    };
  }

  /** Waiters currently registered (for metrics and tests). */
  get waiting(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }

  async close(): Promise<void> {
    await this.subscriber.unsubscribe(this.channel).catch(() => undefined);
  }
}
