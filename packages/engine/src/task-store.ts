import type { Redis } from 'ioredis';
import {
  decodeRecord,
  encodeRecord,
  FIELD,
  LIFECYCLE,
  type A2APushTarget,
  type LifecycleEventName,
  type RecordUpdate,
  type TaskRecord,
} from '@longrun/core';
import {
  completeMany,
  createMany,
  createTask,
  discardTask,
  forgetTask,
  setPush,
  startTask,
  tenantUsage,
  transitionTask,
  type CreateOutcome,
  type DiscardOutcome,
  type PushChange,
  type TransitionOutcome,
} from './commands/index.js';
import { createItem, type CreateItem, type FairTag } from './create-args.js';
import { indexMember, indexPruneBound, taskKeys } from './keys.js';
import { TaskReads } from './task-reads.js';

export type { CreateItem, FairTag } from './create-args.js';
export type { CreateOutcome, PushChange, TransitionOutcome } from './commands/index.js';

/** What an event may write besides the status its row names (never the status itself). */
export type EventFields = Omit<RecordUpdate, 'status' | 'id' | 'tenant' | 'createdAt'>;

type FieldItem = { keys: Record<never, string>; args: { field: string; value: string } };

/** `{field, value}` items from a flat `[field, value, …]` list. */
function pairs(flat: readonly string[]): FieldItem[] {
  const items: FieldItem[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    items.push({ keys: {}, args: { field: flat[i] as string, value: flat[i + 1] as string } });
  }
  return items;
}

/**
 * longrun's task records in Redis (the reads are `TaskReads`'): one hash per task (expiring with the task's ttl, its layout
 * owned by core's codec, its history in it: decision 57), one sorted set per tenant for listing,
 * one key per idempotency key. Every change is a lifecycle event (`transition`), guarded by the
 * event's row. A poll is one `HMGET` (`peek`). Each write is a script of `lua/`, called through
 * its typed wrapper (`src/commands/`).
 */
export class TaskStore extends TaskReads {
  constructor(
    redis: Redis,
    prefix: string,
    private readonly maxTtlMs: number,
    /** The configured prefix when `prefix` is a shard's (its channels are shared; see taskKeys). */
    channelPrefix = prefix,
  ) {
    super(redis, taskKeys(prefix, channelPrefix));
  }

  /** Stores a new record, and claims its idempotency key in the same atomic step. */
  async create(
    record: TaskRecord,
    idempotency?: { key: string; value: string },
    maxOpenTasks = 0,
    maxBytes = 0,
    fairTag?: FairTag,
  ): Promise<CreateOutcome> {
    const now = Date.now();
    const item = createItem(this.keys, {
      record,
      idempotency,
      maxOpenTasks,
      maxBytes,
      fair: fairTag,
    });
    return createTask.run(this.redis, {
      keys: { ...item.keys, openTenants: this.keys.openTenants },
      args: { ...item.args, now, pruneBound: this.pruneBound(now), indexTtl: this.indexTtl },
    });
  }

  /**
   * Creates several tasks in one round trip and one script, each as by {@link create} and in
   * order (a later one sees the idempotency keys and open tasks of the earlier ones).
   */
  async createMany(items: readonly CreateItem[]): Promise<CreateOutcome[]> {
    const now = Date.now();
    // The jobs' key groups: one per add script and queue, numbered from 1 in the order met.
    const groups = new Map<string, number>();
    const restKeys: string[] = [];
    const calls = items.map((item) => {
      const job = item.job;
      if (!job) return createItem(this.keys, item);
      const id = `${job.tag} ${job.keys[0]}`;
      let group = groups.get(id);
      if (group === undefined) {
        groups.set(id, (group = groups.size + 1));
        restKeys.push(...job.keys);
      }
      return createItem(this.keys, item, group);
    });
    return createMany.run(this.redis, {
      keys: { openTenants: this.keys.openTenants },
      args: { now, pruneBound: this.pruneBound(now), indexTtl: this.indexTtl },
      items: calls,
      restKeys,
    });
  }

  /** Index entries older than the longest ttl are pruned as new ones are added. */
  private pruneBound(now: number): string {
    return indexPruneBound(now - this.maxTtlMs);
  }

  /** How long a tenant's index and open set outlive their newest task. */
  private get indexTtl(): string {
    return String(this.maxTtlMs + 60_000);
  }

  /**
   * Sets (`target`) or removes (`{ remove: configId }`) the A2A push notification config of
   * `tenant`'s task `id`, atomically: see `SET_PUSH` for what it refuses.
   */
  async setPush(
    tenant: string,
    id: string,
    change: { set: A2APushTarget; max: number } | { remove: string },
  ): Promise<PushChange> {
    return setPush.run(this.redis, {
      keys: { task: this.keys.task(id), usage: this.keys.usage(tenant) },
      args: {
        tenant,
        id,
        op: 'set' in change ? 'set' : 'del',
        configId: 'set' in change ? change.set.id : change.remove,
        config: 'set' in change ? JSON.stringify(change.set) : '',
        max: 'set' in change ? change.max : 0,
      },
    });
  }

  /**
   * The tenant's open tasks (not yet expired) and stored bytes on this shard, in one script that
   * first gives back the bytes of its tasks that expired (as a create on this shard would).
   */
  async tenantUsage(tenant: string, now = Date.now()): Promise<{ open: number; bytes: number }> {
    return tenantUsage.run(this.redis, {
      keys: { open: this.keys.openTasks(tenant), usage: this.keys.usage(tenant) },
      args: { now },
    });
  }

  /**
   * Applies lifecycle `event` (its row's status and message, then `fields`) unless the task is
   * gone or the row's guard refuses its status. `appendInput` adds an answer to the record's
   * inputs in the same step. `ifSeq` (from {@link peekAt}): only if no change was recorded since
   * that read (`changed` otherwise), so what the caller checked is still what it acts on. `op`
   * (a fresh random id per call): the same call run again by Redis (ioredis resends a call whose
   * reply was lost with the connection) answers as its first run did instead of being refused by
   * its own change; for calls whose caller acts on the answer (a cancel, an answer).
   * @example await store.transition(id, 'progress', { progress: 50 })
   */
  async transition(
    id: string,
    event: LifecycleEventName,
    fields: EventFields = {},
    opts: { appendInput?: unknown; ifSeq?: string; op?: string } = {},
  ): Promise<TransitionOutcome> {
    const encoded = encodeRecord({ ...eventUpdate(event), ...fields, updatedAt: Date.now() });
    const append = 'appendInput' in opts ? (JSON.stringify(opts.appendInput) ?? 'null') : '';
    return transitionTask.run(this.redis, {
      keys: { task: this.keys.task(id), outbox: this.keys.outbox },
      args: {
        event,
        append,
        channel: this.keys.eventsChannel,
        id,
        openPrefix: this.keys.tenantPrefix,
        // '' checks nothing: no `ifSeq`, or a record an older version made without `seq`.
        expectSeq: opts.ifSeq ?? '',
        op: opts.op ?? '',
      },
      items: pairs(encoded),
    });
  }

  /**
   * The `complete` event for several tasks in one round trip and one script: each gets its own
   * result, guarded as by {@link transition}, whose outcome it returns.
   */
  async completeMany(
    items: readonly ({ id: string; result: unknown } | { id: string; json: string })[],
  ): Promise<TransitionOutcome[]> {
    return completeMany.run(this.redis, {
      keys: { outbox: this.keys.outbox },
      args: {
        channel: this.keys.eventsChannel,
        openPrefix: this.keys.tenantPrefix,
        updatedAt: Date.now(),
      },
      // A result given as JSON (a worker's run checked its size on that JSON) is sent as it is.
      items: items.map((item) => ({
        keys: { task: this.keys.task(item.id) },
        args: {
          id: item.id,
          result: 'json' in item ? item.json : (JSON.stringify(item.result) ?? 'null'),
        },
      })),
    });
  }

  /**
   * The `start` event for a task a worker took (unless its guard refuses), returning the record
   * as it now is, in one round trip; `null` when there is nothing to run.
   */
  async start(
    id: string,
    fields: EventFields = {},
  ): Promise<
    (TaskRecord & { stepResults: Map<string, string>; sleeping?: string | undefined }) | null
  > {
    const encoded = encodeRecord({ ...eventUpdate('start'), ...fields, updatedAt: Date.now() });
    const outcome = await startTask.run(this.redis, {
      keys: { task: this.keys.task(id), outbox: this.keys.outbox },
      args: { channel: this.keys.eventsChannel, id },
      items: pairs(encoded),
    });
    if (outcome.kind !== 'ok') return null;
    const record = decodeRecord(id, outcome.hash);
    // A durable task's step results come with it (issue 29): its run replays them from memory.
    // And the sleep shown waiting, if any (`<n> <name>`), for the run that goes on past it.
    const sleeping = /^\d+ (.+)$/s.exec(outcome.hash[FIELD.sleeping] ?? '')?.[1];
    return record && Object.assign(record, { stepResults: outcome.steps, sleeping });
  }

  /** Deletes a terminal task, its index entry and its idempotency key. */
  async forget(
    record: Pick<TaskRecord, 'id' | 'tenant' | 'createdAt'>,
  ): Promise<TransitionOutcome> {
    const key = this.keys.task(record.id);
    const idem = await this.redis.hget(key, FIELD.idempotencyKey);
    return forgetTask.run(this.redis, {
      keys: {
        task: key,
        index: this.keys.index(record.tenant),
        idem: idem || key,
        events: this.keys.events(record.id),
        usage: this.keys.usage(record.tenant),
      },
      args: {
        member: indexMember(record.createdAt, record.id),
        dropIdem: idem ? '1' : '0',
        id: record.id,
      },
    });
  }

  /**
   * Takes back a record whose job was never added (or whose create timed out and may still land),
   * with its index entry, and its idempotency key while that still names this task; unless
   * another request may hold the task (a replay of its key handed it out) or it ran (a change was
   * recorded): then it is `kept`, whole. `absent`: there was no record to take back.
   */
  async discard(
    record: TaskRecord,
    idempotency?: { key: string; value: string },
  ): Promise<DiscardOutcome> {
    return discardTask.run(this.redis, {
      keys: {
        task: this.keys.task(record.id),
        index: this.keys.index(record.tenant),
        idem: idempotency?.key ?? this.keys.task(record.id),
        events: this.keys.events(record.id),
        open: this.keys.openTasks(record.tenant),
        usage: this.keys.usage(record.tenant),
      },
      args: {
        member: indexMember(record.createdAt, record.id),
        idemValue: idempotency?.value ?? '',
        id: record.id,
      },
    });
  }
}

/** The status and message an event's row writes. */
function eventUpdate(event: LifecycleEventName): RecordUpdate {
  const row = LIFECYCLE[event];
  const update: RecordUpdate = {};
  if (row.to !== null) update.status = row.to;
  if ('statusMessage' in row) update.statusMessage = row.statusMessage;
  return update;
}
