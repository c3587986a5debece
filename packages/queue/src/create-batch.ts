import type { CreateItem, CreateOutcome, TaskStore } from './task-store.js';

interface Pending {
  item: CreateItem;
  written: () => void;
  resolve: (outcome: CreateOutcome) => void;
  reject: (error: unknown) => void;
}

/** A create on its way: `written` once it is on the connection, `outcome` once answered. */
export interface PendingCreate {
  written: Promise<void>;
  outcome: Promise<CreateOutcome>;
}

/**
 * Gathers the creates asked for during one turn of the event loop (the submits an API process
 * handled in it) and sends them as one script call (`TaskStore.createMany`): each call costs the
 * API a command to build, send and parse, and the API's CPU is what limits submits. A lone create
 * goes out as the plain create script. Nothing waits longer than the rest of the current turn.
 *
 * A failed call fails every create in it, and none is sent again: a create is not idempotent, and
 * a script stopped half-way keeps what it wrote, so each submit takes its own record back, as it
 * does after a timeout.
 */
export class CreateBatch {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly store: TaskStore,
    private readonly maxBatch = 100,
  ) {}

  /**
   * Creates `item.record`; the outcome is the one `TaskStore.create` would give. `written`
   * resolves once the call is on the connection (sent, or queued while reconnecting): any command
   * sent on the same connection after that runs after it in Redis.
   */
  create(item: CreateItem): PendingCreate {
    let written!: () => void;
    const sent = new Promise<void>((resolve) => (written = resolve));
    const outcome = new Promise<CreateOutcome>((resolve, reject) => {
      this.pending.push({ item, written, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
    // Marked as handled: its caller may attach its own handler a turn later (after waiting for
    // `written`, or for a connection), and a failure seen by nobody must not end the process.
    outcome.catch(() => undefined);
    return { written: sent, outcome };
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      const first = batch[0]!.item;
      const sent =
        batch.length === 1
          ? this.store
              .create(first.record, first.idempotency, first.maxOpenTasks)
              .then((outcome) => [outcome])
          : this.store.createMany(batch.map((p) => p.item));
      // The call above wrote its command (ioredis sends synchronously, or queues it offline).
      for (const p of batch) p.written();
      sent.then(
        (outcomes) => batch.forEach((p, i) => p.resolve(outcomes[i]!)),
        (error: unknown) => batch.forEach((p) => p.reject(error)),
      );
    }
  };
}
