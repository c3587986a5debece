import type { CreateItem, CreateOutcome, TaskStore } from './task-store.js';
import { TurnBatch, type PendingCall } from './turn-batch.js';

/** A create on its way: `written` once it is on the connection, `outcome` once answered. */
export type PendingCreate = PendingCall<CreateOutcome>;

/**
 * The creates asked for during one turn of the event loop (the submits an API process handled in
 * it), sent as one script call (`TaskStore.createMany`): each call costs the API a command to
 * build, send and parse, and the API's CPU is what limits submits (decision 21). A lone create
 * goes out as the plain create script.
 *
 * A failed call fails every create in it, and none is sent again: a create is not idempotent, and
 * a script stopped half-way keeps what it wrote, so each submit takes its own record back, as it
 * does after a timeout.
 */
export class CreateBatch extends TurnBatch<CreateItem, CreateOutcome> {
  constructor(
    private readonly store: TaskStore,
    maxBatch = 100,
  ) {
    super(maxBatch);
  }

  /** Creates `item.record`; the outcome is the one `TaskStore.create` would give. */
  create(item: CreateItem): PendingCreate {
    return this.add(item);
  }

  protected send(items: CreateItem[]): Promise<CreateOutcome[]> {
    const [first] = items;
    // A create with its job goes as the batched script, which alone adds jobs.
    return items.length === 1 && first && !first.job
      ? this.store
          .create(first.record, first.idempotency, first.maxOpenTasks, first.maxBytes, first.fair)
          .then((outcome) => [outcome])
      : this.store.createMany(items);
  }
}
