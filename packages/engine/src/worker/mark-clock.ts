/** Something to do once, `delayMs` after it was queued, unless it was called off meanwhile. */
export interface Due {
  due(): void;
}

/**
 * One timer for many deferred calls of the same delay (the `running` marks of a worker's first
 * runs, decision 18). A timer per run cost a `Timeout` object, a closure, a set and a clear for
 * every job, most of which end long before their mark is due. Entries come due in the order they
 * were queued (one delay for all), so the queue is a list; `add` gives a ticket, and `cancel`
 * with it lets go of the entry at once (nothing of an ended run is kept until its time).
 */
export class MarkClock {
  private items: (Due | undefined)[] = [];
  private times: number[] = [];
  /** Position of the next entry due in `items`. */
  private head = 0;
  /** The ticket of `items[0]` (tickets count every entry ever queued). */
  private base = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly delayMs: number) {}

  /** Calls `item.due()` in `delayMs` (at the earliest), unless cancelled; returns its ticket. */
  add(item: Due, now = Date.now()): number {
    this.items.push(item);
    this.times.push(now + this.delayMs);
    this.timer ??= setTimeout(this.fire, this.delayMs);
    return this.base + this.items.length - 1;
  }

  /** Calls off the entry of `ticket` (if still queued). */
  cancel(ticket: number): void {
    const at = ticket - this.base;
    if (at >= this.head && at < this.items.length) this.items[at] = undefined;
  }

  /** Entries queued and not yet due (called off ones included). */
  get size(): number {
    return this.items.length - this.head;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    const now = Date.now();
    while (this.head < this.items.length && this.times[this.head]! <= now) {
      const item = this.items[this.head];
      this.items[this.head] = undefined;
      this.head += 1;
      item?.due();
    }
    if (this.head === this.items.length) {
      this.base += this.items.length;
      this.items = [];
      this.times = [];
      this.head = 0;
      return;
    }
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.base += this.head;
      this.items = this.items.slice(this.head);
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
    this.timer = setTimeout(this.fire, Math.max(1, this.times[this.head]! - now));
  };
}
