import type { TaskStatus } from '@longrun/core';
import type { TaskStore, TransitionOutcome } from './task-store.js';

interface Pending {
  id: string;
  result: unknown;
  written: () => void;
  resolve: (outcome: TransitionOutcome) => void;
  reject: (error: unknown) => void;
}

/** A completion on its way: `written` once it is on the connection, `outcome` once answered. */
export interface PendingCompletion {
  written: Promise<void>;
  outcome: Promise<TransitionOutcome>;
}

/**
 * Gathers the completions asked for during one turn of the event loop and sends them as one
 * script call (`TaskStore.completeMany`): a worker running many jobs finishes several per turn,
 * and each call costs a socket write and a script start on both sides. A lone completion goes
 * out as the plain transition script. Nothing waits longer than the rest of the current turn.
 */
export class CompletionBatch {
  private pending: Pending[] = [];
  private scheduled = false;

  /** `completion`: the status and message every completed task gets. */
  constructor(
    private readonly store: TaskStore,
    private readonly completion: { status: TaskStatus; statusMessage: string },
    private readonly maxBatch = 100,
  ) {}

  /**
   * Completes `id` with `result`; the outcome is the one `TaskStore.transition` would give.
   * `written` resolves once the call is on the connection (sent, or queued while reconnecting):
   * any command sent on the same connection after that runs after it in Redis.
   */
  complete(id: string, result: unknown): PendingCompletion {
    let written!: () => void;
    const sent = new Promise<void>((resolve) => (written = resolve));
    const outcome = new Promise<TransitionOutcome>((resolve, reject) => {
      this.pending.push({ id, result, written, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
    return { written: sent, outcome };
  }

  private one(p: Pending): Promise<TransitionOutcome> {
    return this.store.transition(p.id, { ...this.completion, result: p.result });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      const sent =
        batch.length === 1
          ? this.one(batch[0]!).then((outcome) => [outcome])
          : this.store.completeMany(batch, this.completion);
      // The call above wrote its command (ioredis sends synchronously, or queues it offline).
      for (const p of batch) p.written();
      sent.then(
        (outcomes) => batch.forEach((p, i) => p.resolve(outcomes[i]!)),
        (error: unknown) => {
          if (batch.length === 1) {
            batch[0]!.reject(error);
            return;
          }
          // One bad moment must not fail every job of the batch: each goes again on its own.
          for (const p of batch) this.one(p).then(p.resolve, p.reject);
        },
      );
    }
  };
}
