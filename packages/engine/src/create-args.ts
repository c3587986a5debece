import { encodeRecord, FIELD, type TaskRecord } from '@longrun/core';
import type { JobAdd } from './bullmq-adapter.js';
import { indexMember, type TaskKeys } from './keys.js';

/** One task to create: its record, its idempotency claim, the tenant's cap (0 = none). */
export interface CreateItem {
  record: TaskRecord;
  idempotency?: { key: string; value: string } | undefined;
  maxOpenTasks?: number;
  /** The tenant's storage budget in bytes (0 = none). */
  maxBytes?: number;
  /** Fair share: where the task's BullMQ priority comes from (none: no priority is made). */
  fair?: FairTag | undefined;
  /**
   * The task's BullMQ job, added by the create once the record is stored (`TaskQueue.prepare`);
   * under fair share with the priority the create gives. None: the caller adds the job.
   */
  job?: JobAdd | undefined;
}

/** The inputs of a task's fair-share priority (see `lua/includes/fair-share.lua`). */
export interface FairTag {
  /** The queue's hash of tenant -> last tag (`TaskKeys.fairShare`). */
  key: string;
  /** The queue's BullMQ prioritized set, whose head is the virtual time now. */
  head: string;
  /** How far one task moves its tenant's tag: 1 / the tenant's weight. */
  step: number;
  /** Added to the tag: the request's own `priority` minus one. */
  offset: number;
}

/** A create's own keys, by the names of `lua/create-many.lua`'s items. */
export interface CreateKeys {
  task: string;
  index: string;
  idem: string;
  open: string;
  usage: string;
  fair: string;
  head: string;
}

/** A create's own arguments (its job's aside), by the names of `lua/create-many.lua`'s items. */
export interface CreateArgs {
  expiresAt: string;
  member: string;
  idemValue: string;
  id: string;
  maxOpenTasks: number;
  maxBytes: number;
  fairStep: number;
  priorityOffset: number;
  fields: string;
  /** The job create-many adds after the record (create-task reads none of these). */
  jobTag: string;
  jobGroup: number;
  jobArgs: Buffer | string;
  jobData: string;
  jobOpts: Buffer | string;
}

/** A create's keys and arguments (see `lua/create-task.lua`'s header for each). */
export function createItem(
  keys: TaskKeys,
  { record, idempotency, maxOpenTasks = 0, maxBytes = 0, fair, job }: CreateItem,
  jobGroup = 0,
): { keys: CreateKeys; args: CreateArgs } {
  const taskKey = keys.task(record.id);
  const fields = createFields(record);
  if (idempotency) fields.push(FIELD.idempotencyKey, idempotency.key);
  fields.push(FIELD.seq, '1');
  return {
    keys: {
      task: taskKey,
      index: keys.index(record.tenant),
      idem: idempotency?.key ?? taskKey,
      open: keys.openTasks(record.tenant),
      usage: keys.usage(record.tenant),
      fair: fair?.key ?? taskKey,
      head: fair?.head ?? taskKey,
    },
    args: {
      expiresAt: String(record.createdAt + record.ttlMs),
      member: indexMember(record.createdAt, record.id),
      idemValue: idempotency?.value ?? '',
      id: record.id,
      maxOpenTasks,
      maxBytes,
      fairStep: fair?.step ?? 0,
      priorityOffset: fair?.offset ?? 0,
      // The record's fields travel as one JSON array (decision 21).
      fields: JSON.stringify(fields),
      // One object literal of one shape for every create, job or not (no spreads: issue 28).
      jobTag: job ? job.tag : '',
      jobGroup,
      jobArgs: job ? job.args[0] : '',
      jobData: job ? job.args[1] : '',
      jobOpts: job ? job.args[2] : '',
    },
  };
}

/**
 * A new record's fields, flat, less those that hold what an absent field reads as (core's
 * `decodeRecord`, and the scripts): the id (it is in the key), no cancel asked, not awaiting
 * input, no answers. Fewer fields to send, decode and store for every task.
 */
function createFields(record: TaskRecord): string[] {
  const all = encodeRecord(record);
  const fields: string[] = [];
  for (let i = 0; i + 1 < all.length; i += 2) {
    const [name, value] = [all[i] as string, all[i + 1] as string];
    if (name === FIELD.id || DEFAULTS[name] === value) continue;
    fields.push(name, value);
  }
  return fields;
}

const DEFAULTS: Record<string, string> = {
  [FIELD.cancelRequested]: '0',
  [FIELD.awaitingInput]: '0',
  [FIELD.inputs]: '[]',
};
