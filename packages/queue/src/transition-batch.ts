import type { TaskStatus } from '@longrun/core';
import type { TaskStore, TaskUpdate, TransitionOutcome } from './task-store.js';

interface Pending {
  id: string;
  update: TaskUpdate;
  requiredStatus?: TaskStatus;
  resolve: (outcome: TransitionOutcome) => void;
  reject: (error: unknown) => void;
}

/**
 * Gathers the transitions asked for during one turn of the event loop and sends them as one
 * script call (`TaskStore.transitionMany`): a worker running many jobs finishes several per turn,
 * and each call costs a socket write and a script start on both sides. A lone transition goes
 * out as the plain script. Nothing waits longer than the rest of the current turn.
 */
export class TransitionBatch {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly store: TaskStore,
    private readonly maxBatch = 100,
  ) {}

  /** Same contract as `TaskStore.transition` (without an input to append). */
  transition(
    id: string,
    update: TaskUpdate,
    requiredStatus?: TaskStatus,
  ): Promise<TransitionOutcome> {
    return new Promise((resolve, reject) => {
      this.pending.push({ id, update, requiredStatus, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      const sent =
        batch.length === 1
          ? this.store
              .transition(batch[0]!.id, batch[0]!.update, {
                requiredStatus: batch[0]!.requiredStatus,
              })
              .then((outcome) => [outcome])
          : this.store.transitionMany(batch);
      sent.then(
        (outcomes) => batch.forEach((p, i) => p.resolve(outcomes[i]!)),
        (error: unknown) => {
          if (batch.length === 1) {
            batch[0]!.reject(error);
            return;
          }
          // One bad moment must not fail every job of the batch: each goes again on its own.
          for (const p of batch) {
            this.store
              .transition(p.id, p.update, { requiredStatus: p.requiredStatus })
              .then(p.resolve, p.reject);
          }
        },
      );
    }
  };
}
