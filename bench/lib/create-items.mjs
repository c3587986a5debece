// The create-many items the bench experiments send (create-script, create-floor, lua-profile,
// complete-script): a new echo task's record as the API builds it, and the item around it.
import { randomUUID } from 'node:crypto';

/** A new task's record as a submit of `type` makes it, created `now`. */
export function newRecord(tenant, input, now = Date.now(), type = 'echo') {
  return {
    id: randomUUID(),
    tenant,
    type,
    status: 'working',
    statusMessage: 'queued',
    createdAt: now,
    updatedAt: now,
    ttlMs: 86_400_000,
    input,
    cancelRequested: false,
    awaitingInput: false,
    inputs: [],
  };
}

/**
 * A create-many item as a default API submits it (`TaskStore.createMany`): `record`, under an
 * open-task cap and storage budget, with fair share on `queue` and the job added by the create
 * unless told otherwise.
 */
export function apiItem(store, jobs, queue, record, opts = {}) {
  const { cap = 10_000, budget = 256 * 1024 * 1024, fair = true, job = true } = opts;
  const fairShare = fair
    ? {
        key: store.keys.fairShare(queue.name),
        head: queue.toKey('prioritized'),
        step: 1,
        offset: 0,
      }
    : undefined;
  const added = job ? jobs.prepare(record, { name: record.type }, { fairShare: fair }) : undefined;
  return { record, fair: fairShare, job: added, maxOpenTasks: cap, maxBytes: budget };
}
