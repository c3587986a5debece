import type { Redis } from 'ioredis';

type Listener = () => void;

/**
 * Wakes local waiters (SSE streams, long polls) when a task has a new event. One subscriber
 * connection per process serves every waiter, so held requests do not pin a connection each.
 * Each task has its own channel (`<channelPrefix><taskId>`), subscribed only while someone here
 * waits on that task: events of tasks nobody watches cost Redis a lookup, not a message to every
 * API process.
 *
 * Notifications are only wake-ups: waiters re-read the task's event list, which is the truth.
 * Every listener is also called once its subscription is live, so an event that landed between
 * a waiter's first read and the subscription is not left to the waiter's periodic re-check; a
 * notification lost during a reconnect costs latency (until that re-check), not events.
 */
export class TaskEvents {
  private readonly listeners = new Map<string, Set<Listener>>();

  /** @example const events = new TaskEvents(createRedis(url, 'subscriber'), keys.eventsChannel) */
  constructor(
    private readonly subscriber: Redis,
    private readonly channelPrefix: string,
  ) {
    subscriber.on('message', (channel: string) => {
      if (!channel.startsWith(this.channelPrefix)) return;
      this.wake(channel.slice(this.channelPrefix.length));
    });
  }

  /** Calls `listener` on every new event of `taskId`; returns the function that stops it. */
  on(taskId: string, listener: Listener): () => void {
    let set = this.listeners.get(taskId);
    if (!set) {
      this.listeners.set(taskId, (set = new Set()));
      this.subscriber.subscribe(this.channelPrefix + taskId).then(
        () => this.wake(taskId),
        () => undefined, // Redis away: the waiters' own re-checks carry on; ioredis resubscribes
      );
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(taskId) === set) {
        this.listeners.delete(taskId);
        this.subscriber.unsubscribe(this.channelPrefix + taskId).catch(() => undefined);
      }
    };
  }

  /** Waiters currently registered (for metrics and tests). */
  get waiting(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }

  async close(): Promise<void> {
    const channels = [...this.listeners.keys()].map((id) => this.channelPrefix + id);
    this.listeners.clear();
    if (channels.length > 0) await this.subscriber.unsubscribe(...channels).catch(() => undefined);
  }

  private wake(taskId: string): void {
    for (const listener of this.listeners.get(taskId) ?? []) listener();
  }
}
