import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobTypeDirectory } from '../registry/job-type-directory.js';
import type { RegisteredJobType } from '../registry/job-type-registry.js';
import {
  describeJsonJobType,
  type JobTypeDescriptor,
  type JsonJobTypeSpec,
} from '../registry/describe.js';
import { shardPrefix } from '../shards.js';
import type { WorkerPresence } from './worker-presence.js';

/** What registering a type answers: registered, or owned by someone else (issue 41). */
export type RegisterOutcome =
  | { kind: 'ok'; descriptor: JobTypeDescriptor }
  | { kind: 'owned'; name: string }
  | { kind: 'tooMany'; max: number };

/** What removing a type answers (`DELETE /v1/worker/job-types/{name}`). */
export type UnregisterOutcome = { kind: 'ok' | 'unknown' | 'owned' | 'busy' };

/** The types a lease request names, when its worker owns them all. */
export type LeasableTypes =
  | { kind: 'ok'; types: Map<string, RegisteredJobType> }
  | { kind: 'unknownType'; name: string }
  | { kind: 'owned'; name: string };

/** A re-read of the registry because a type looked owned by another, at most this often. */
const OWNER_REREAD_MS = 250;

/** The jobs still to run of a queue: what `DELETE` of a type waits for. */
const UNFINISHED = ['waiting', 'paused', 'delayed', 'prioritized', 'active', 'waiting-children'];

/**
 * HTTP workers' job types, owned (issue 41): the first worker key to register a type owns it
 * (`JobTypeRegistry.claim`, in Redis), a type an SDK worker serves is owned by SDK workers, and a
 * key registers, re-registers, removes and leases only the types it owns; a named queue another
 * owner's type runs on is that owner's too (its concurrency is the queue's).
 */
export class WorkerTypes {
  private lastReread = 0;

  constructor(
    private readonly opts: {
      connection: Redis;
      prefix: string;
      shards: number;
      types: JobTypeDirectory;
      presence: WorkerPresence;
      /** Most types one worker key may own (`LONGRUN_WORKER_MAX_TYPES`). */
      maxTypesPerWorker: number;
    },
  ) {}

  /**
   * Registers (or re-registers) a job type `worker` owns, or claims: its descriptor in the
   * registry, as an SDK worker's heartbeat writes it, and its fleet-wide concurrency cap on its
   * queue in every shard (as `LONGRUN_TYPE_CONCURRENCY` does). The type stays known.
   */
  async register(
    worker: string,
    spec: JsonJobTypeSpec & { concurrency?: number | undefined },
  ): Promise<RegisterOutcome> {
    const owner = ownerOf(worker);
    await this.opts.types.refresh();
    const known = this.opts.types.get(spec.name);
    if (known?.owner !== undefined && known.owner !== owner) {
      return { kind: 'owned', name: spec.name };
    }
    const descriptor = describeJsonJobType(spec);
    const sharing = [...this.opts.types.values()].find(
      (t) => t.name !== spec.name && t.queueName === descriptor.queueName && t.owner !== owner,
    );
    if (sharing) return { kind: 'owned', name: sharing.name };
    // A type new to this key counts against its cap (concurrent claims may pass it by a few).
    const max = this.opts.maxTypesPerWorker;
    const owned = [...this.opts.types.values()].filter((t) => t.owner === owner).length;
    if (known?.owner !== owner && owned >= max) return { kind: 'tooMany', max };
    if ((await this.opts.types.registry.claim(spec.name, owner)) !== owner) {
      return { kind: 'owned', name: spec.name };
    }
    await this.opts.presence.register(worker, descriptor);
    if (spec.concurrency !== undefined) {
      await this.eachQueue(descriptor.queueName!, (q) => q.setGlobalConcurrency(spec.concurrency!));
    }
    await this.opts.types.refresh();
    return { kind: 'ok', descriptor };
  }

  /**
   * Removes a type `worker` owns that no task waits for: its versions, its owner (another key
   * may register it then) and its queue's concurrency cap. A task submitted meanwhile waits
   * until its type is registered again, or its ttl.
   */
  async unregister(worker: string, name: string): Promise<UnregisterOutcome> {
    await this.opts.types.refresh();
    const type = this.opts.types.get(name);
    if (!type) return { kind: 'unknown' };
    if (type.owner !== ownerOf(worker)) return { kind: 'owned' };
    let unfinished = 0;
    await this.eachQueue(type.queueName!, async (q) => {
      unfinished += await q.getJobCountByTypes(...(UNFINISHED as never[]));
    });
    if (unfinished > 0) return { kind: 'busy' };
    await this.opts.types.registry.remove(name);
    if (!type.queue) await this.eachQueue(type.queueName!, (q) => q.removeGlobalConcurrency());
    await this.opts.types.refresh();
    return { kind: 'ok' };
  }

  /** The types `names`, when `worker` owns each (the registry re-read once if one looks not). */
  async leasable(worker: string, names: readonly string[]): Promise<LeasableTypes> {
    const owner = ownerOf(worker);
    const types = new Map<string, RegisteredJobType>();
    for (const name of names) {
      let type = await this.opts.types.resolve(name);
      if (!type) return { kind: 'unknownType', name };
      if (type.owner !== owner && Date.now() - this.lastReread >= OWNER_REREAD_MS) {
        // This replica may not have heard of a registration on another one yet.
        this.lastReread = Date.now();
        await this.opts.types.refresh();
        type = this.opts.types.get(name) ?? type;
      }
      if (type.owner !== owner) return { kind: 'owned', name };
      types.set(name, type);
    }
    return { kind: 'ok', types };
  }

  private async eachQueue(name: string, act: (queue: Queue) => Promise<unknown>): Promise<void> {
    for (let n = 0; n < Math.max(1, this.opts.shards); n++) {
      const queue = new Queue(name, {
        connection: this.opts.connection,
        prefix: shardPrefix(this.opts.prefix, n),
      });
      try {
        await act(queue);
      } finally {
        await queue.close();
      }
    }
  }
}

/** A worker key's owner name in the registry, as its registry id (`WorkerPresence`). */
function ownerOf(worker: string): string {
  return `http:${worker}`;
}
