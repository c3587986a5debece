import type { TaskStore, TransitionOutcome } from './task-store.js';
import { TurnBatch, type PendingCall, type Queued } from './turn-batch.js';

interface Completion {
  id: string;
  result: unknown;
}

/** A completion on its way: `written` once it is on the connection, `outcome` once answered. */
export type PendingCompletion = PendingCall<TransitionOutcome>;

/**
 * The completions asked for during one turn of the event loop, sent as one script call
 * (`TaskStore.completeMany`): a worker running many jobs finishes several per turn, and each call
 * costs a socket write and a script start on both sides. A lone completion goes out as the plain
 * transition script. If a call fails, each of its completions is sent again on its own, so one
 * bad task fails alone (a completion is guarded, so sending it twice is harmless).
 */
export class CompletionBatch extends TurnBatch<Completion, TransitionOutcome> {
  constructor(
    private readonly store: TaskStore,
    maxBatch = 100,
  ) {
    super(maxBatch);
  }

  /** Completes `id` with `result` (the `complete` event); the outcome `transition` would give. */
  complete(id: string, result: unknown): PendingCompletion {
    return this.add({ id, result });
  }

  protected send(items: Completion[]): Promise<TransitionOutcome[]> {
    return items.length === 1
      ? this.one(items[0]!).then((outcome) => [outcome])
      : this.store.completeMany(items);
  }

  protected override failed(batch: Queued<Completion, TransitionOutcome>[], error: unknown): void {
    if (batch.length === 1) {
      batch[0]!.reject(error);
      return;
    }
    // One bad moment must not fail every job of the batch: each goes again on its own.
    for (const q of batch) this.one(q.item).then(q.resolve, q.reject);
  }

  private one(c: Completion): Promise<TransitionOutcome> {
    return this.store.transition(c.id, 'complete', { result: c.result });
  }
}
