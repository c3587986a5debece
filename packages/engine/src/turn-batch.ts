/** Something asked for during a turn, on its way: its item and how to settle it. */
export interface Queued<Item, Outcome> {
  item: Item;
  resolve: (outcome: Outcome) => void;
  reject: (error: unknown) => void;
}

/** A call on its way: `written` once it is on the connection, `outcome` once answered. */
export interface PendingCall<Outcome> {
  written: Promise<void>;
  outcome: Promise<Outcome>;
}

/**
 * Gathers what is asked for during one turn of the event loop and sends it as one call at the
 * end of the turn (`setImmediate`), at most `maxBatch` items a call: a process that handles many
 * requests or jobs per turn pays for one command to build, write and parse instead of one each.
 * Nothing waits longer than the rest of the current turn. Subclasses say how a batch is sent
 * (`send`, which must write its command before it returns, as ioredis does) and what a failed call
 * means for its items (`failed`: by default, each of them fails).
 */
export abstract class TurnBatch<Item, Outcome> {
  private pending: (Queued<Item, Outcome> & { written: () => void })[] = [];
  private scheduled = false;

  constructor(private readonly maxBatch = 100) {}

  /**
   * Queues `item` for this turn's call. `written` resolves once the call has been handed to the
   * connection (sent, queued while reconnecting, or refused at once by a connection that cannot
   * write, which `outcome` then says): any command sent on the same connection after that runs
   * after it in Redis.
   */
  protected add(item: Item): PendingCall<Outcome> {
    let written!: () => void;
    const sent = new Promise<void>((resolve) => (written = resolve));
    const outcome = new Promise<Outcome>((resolve, reject) => {
      this.pending.push({ item, written, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
    // Marked as handled: a caller may attach its own handler a turn later (after waiting for
    // `written`, or for a connection), and a failure seen by nobody must not end the process.
    outcome.catch(() => undefined);
    return { written: sent, outcome };
  }

  /** Sends `items` as one call; one outcome per item, in order. */
  protected abstract send(items: Item[]): Promise<Outcome[]>;

  /** Settles the items of a call that failed with `error`. */
  protected failed(batch: Queued<Item, Outcome>[], error: unknown): void {
    for (const q of batch) q.reject(error);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      let sent: Promise<Outcome[]>;
      try {
        sent = this.send(batch.map((q) => q.item));
      } catch (error) {
        sent = Promise.reject(error); // a call that could not even be built fails its items only
      }
      // The call above wrote its command (ioredis sends synchronously, or queues it offline).
      for (const q of batch) q.written();
      sent.then(
        (outcomes) => batch.forEach((q, i) => q.resolve(outcomes[i]!)),
        (error: unknown) => this.failed(batch, error),
      );
    }
  };
}
