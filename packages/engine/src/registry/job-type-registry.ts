import type { Redis } from 'ioredis';
import { assertJobTypeName } from '@longrun/core';
import { legacyQueueNameFor, taskKeys, type TaskKeys } from '../keys.js';
import type { JobTypeDescriptor } from './describe.js';

/** One version of a job type as the registry holds it. */
export interface RegisteredVersion extends JobTypeDescriptor {
  /** When this version was first registered (ms). */
  registeredAt: number;
  /** When a worker last said it serves it (ms). */
  lastSeenAt: number;
  /** Workers serving it now (their heartbeat has not lapsed). */
  workers: number;
}

/**
 * A job type: the version the API validates with (its fields), and every version registered.
 * The validating version is the newest with a live worker; with none live, the newest.
 */
export interface RegisteredJobType extends RegisteredVersion {
  /** Newest first. */
  versions: RegisteredVersion[];
  /**
   * The fleet-wide concurrency cap a worker stored on the type's own queue
   * (`LONGRUN_TYPE_CONCURRENCY`), if any, as `JobTypeDirectory` last read it.
   */
  fleetConcurrency?: number | undefined;
  /**
   * Who owns the type (issue 41): `sdk` (SDK workers serve it) or `http:<worker name>` (the
   * worker key that registered it first); unset: nobody yet.
   */
  owner?: string | undefined;
}

/** The owner of the types SDK workers serve; an HTTP worker's registry id starts `http:`. */
export const SDK_OWNER = 'sdk';
const HTTP_WORKER = 'http:';

/** Versions not served and not the newest of their type are dropped after this long unseen. */
export const REGISTRY_RETAIN_MS = 24 * 3_600_000;

/** A BullMQ queue name (no `:`, which BullMQ refuses, nor a hash tag's braces). */
const QUEUE_NAME_PATTERN = /^[^:{}\s]{1,200}$/;

const field = (d: { name: string; version: string }) => `${d.name}@${d.version}`;

/**
 * The job-type registry in Redis: workers publish the types they serve with a heartbeat; the
 * API reads it to validate and place submits. Every command touches one key, so it works
 * unchanged on Redis Cluster.
 *
 * - `<prefix>:jobtypes` (hash): `name@version` → the version's descriptor and `registeredAt`.
 * - `<prefix>:jobtypes:workers` (sorted set): `name@version workerId`, scored by when its
 *   heartbeat lapses.
 * - `<prefix>:jobtypes:seen` (sorted set): `name@version`, scored by when it was last served.
 * - `<prefix>:jobtypes:owners` (hash): `name` → its owner (`sdk`, or `http:<worker name>`).
 */
export class JobTypeRegistry {
  readonly keys: TaskKeys;

  constructor(
    private readonly connection: Redis,
    prefix: string,
  ) {
    this.keys = taskKeys(prefix);
  }

  /**
   * A worker's heartbeat: records that `workerId` serves these versions until `liveForMs` from
   * now, and announces a change when a version or a worker is new. Answers whether it was.
   */
  async publish(
    workerId: string,
    descriptors: readonly JobTypeDescriptor[],
    liveForMs: number,
  ): Promise<boolean> {
    // A reserved name (the MCP door's own tools) is refused before anything is written.
    for (const d of descriptors) assertJobTypeName(d.name);
    const now = Date.now();
    const pipeline = this.connection.pipeline();
    for (const d of descriptors) {
      pipeline.hsetnx(this.keys.jobTypes, field(d), JSON.stringify({ ...d, registeredAt: now }));
      pipeline.zadd(this.keys.jobTypeWorkers, now + liveForMs, `${field(d)} ${workerId}`);
      pipeline.zadd(this.keys.jobTypeSeen, now, field(d));
    }
    pipeline.zremrangebyscore(this.keys.jobTypeWorkers, '-inf', now);
    // A type an SDK worker serves is owned by SDK workers, whoever registered it before: the
    // operator's own code (with Redis access) outranks a worker key (issue 41).
    if (descriptors.length > 0 && !workerId.startsWith(HTTP_WORKER)) {
      pipeline.hset(this.keys.jobTypeOwners, ...descriptors.flatMap((d) => [d.name, SDK_OWNER]));
    }
    const replies = (await pipeline.exec()) ?? [];
    const failed = replies.find(([err]) => err);
    if (failed) throw failed[0] as Error;
    // hsetnx and the workers' zadd answer 1 when new; the trailing prune answers how many lapsed.
    const last = descriptors.length * 3;
    const changed = replies.some(([, n], i) => i <= last && i % 3 !== 2 && Number(n) > 0);
    if (changed) await this.connection.publish(this.keys.jobTypesChannel, workerId);
    return changed;
  }

  /** A worker stopping: it no longer serves these versions (the change is announced). */
  async withdraw(workerId: string, descriptors: readonly JobTypeDescriptor[]): Promise<void> {
    if (descriptors.length === 0) return;
    const members = descriptors.map((d) => `${field(d)} ${workerId}`);
    await this.connection.zrem(this.keys.jobTypeWorkers, ...members);
    await this.connection.publish(this.keys.jobTypesChannel, workerId);
  }

  /**
   * Claims `name` for `owner` unless someone owns it: answers its owner after the claim (the
   * claimant's, or the one before it). One round trip.
   */
  async claim(name: string, owner: string): Promise<string> {
    const replies = await this.connection
      .pipeline()
      .hsetnx(this.keys.jobTypeOwners, name, owner)
      .hget(this.keys.jobTypeOwners, name)
      .exec();
    const failed = replies?.find(([err]) => err);
    if (failed) throw failed[0] as Error;
    return String(replies?.[1]?.[1] ?? '');
  }

  /** Forgets `name`: every version, who serves it, its owner (the change is announced). */
  async remove(name: string): Promise<void> {
    const ours = (member: string) => member.startsWith(`${name}@`);
    const fields = (await this.connection.hkeys(this.keys.jobTypes)).filter(ours);
    const serving = (await this.connection.zrange(this.keys.jobTypeWorkers, 0, -1)).filter(ours);
    const pipeline = this.connection.pipeline().hdel(this.keys.jobTypeOwners, name);
    if (fields.length > 0) {
      pipeline.hdel(this.keys.jobTypes, ...fields).zrem(this.keys.jobTypeSeen, ...fields);
    }
    if (serving.length > 0) pipeline.zrem(this.keys.jobTypeWorkers, ...serving);
    const failed = (await pipeline.exec())?.find(([err]) => err);
    if (failed) throw failed[0] as Error;
    await this.connection.publish(this.keys.jobTypesChannel, `removed ${name}`);
  }

  /** Every job type registered, by name, with live worker counts as of now. */
  async read(): Promise<Map<string, RegisteredJobType>> {
    const now = Date.now();
    const replies = (await this.connection
      .pipeline()
      .hgetall(this.keys.jobTypes)
      .zrangebyscore(this.keys.jobTypeWorkers, `(${now}`, '+inf')
      .zrange(this.keys.jobTypeSeen, 0, -1, 'WITHSCORES')
      .hgetall(this.keys.jobTypeOwners)
      .exec()) as [Error | null, unknown][] | null;
    if (!replies) throw new Error('the registry read was discarded');
    const [[e1, hash], [e2, live], [e3, seen], [e4, ownerHash]] = replies as [
      [Error | null, unknown],
      [Error | null, unknown],
      [Error | null, unknown],
      [Error | null, unknown],
    ];
    const err = e1 ?? e2 ?? e3 ?? e4;
    if (err) throw err;
    const owners = new Map(Object.entries((ownerHash ?? {}) as Record<string, string>));
    const workers = new Map<string, number>();
    for (const member of live as string[]) {
      const space = member.indexOf(' ');
      const key = member.slice(0, space);
      workers.set(key, (workers.get(key) ?? 0) + 1);
      // Served by an SDK worker before owners were kept: SDK-owned all the same.
      const name = key.slice(0, key.lastIndexOf('@'));
      if (!member.startsWith(HTTP_WORKER, space + 1) && !owners.has(name)) {
        owners.set(name, SDK_OWNER);
      }
    }
    const lastSeen = new Map<string, number>();
    const pairs = seen as string[];
    for (let i = 0; i < pairs.length; i += 2) lastSeen.set(pairs[i]!, Number(pairs[i + 1]));
    const versions = new Map<string, RegisteredVersion[]>();
    for (const [key, json] of Object.entries((hash ?? {}) as Record<string, string>)) {
      const version = parseVersion(json, workers.get(key) ?? 0, lastSeen.get(key));
      if (!version) continue; // not ours or damaged: never let it stop the others
      const list = versions.get(version.name) ?? [];
      list.push(version);
      versions.set(version.name, list);
    }
    const types = new Map<string, RegisteredJobType>();
    for (const name of [...versions.keys()].sort()) {
      const list = versions.get(name)!.sort(newestFirst);
      const validating = list.find((v) => v.workers > 0) ?? list[0]!;
      const owner = owners.get(name);
      types.set(name, { ...validating, versions: list, ...(owner ? { owner } : {}) });
    }
    return types;
  }

  /**
   * Drops versions nobody has served for `retainMs` that are not the newest of their type (a
   * type once registered stays known: its tasks are accepted and wait for a worker).
   */
  async prune(retainMs = REGISTRY_RETAIN_MS): Promise<number> {
    const before = Date.now() - retainMs;
    const stale: string[] = [];
    for (const type of (await this.read()).values()) {
      const newest = type.versions[0];
      for (const v of type.versions) {
        if (v !== newest && v.workers === 0 && v.lastSeenAt < before) stale.push(field(v));
      }
    }
    if (stale.length === 0) return 0;
    await this.connection.hdel(this.keys.jobTypes, ...stale);
    await this.connection.zrem(this.keys.jobTypeSeen, ...stale);
    return stale.length;
  }
}

function newestFirst(a: RegisteredVersion, b: RegisteredVersion): number {
  return b.registeredAt - a.registeredAt || (a.version < b.version ? 1 : -1);
}

function parseVersion(
  json: string,
  workers: number,
  lastSeenAt: number | undefined,
): RegisteredVersion | undefined {
  try {
    const v = JSON.parse(json) as Partial<RegisteredVersion>;
    if (
      typeof v.name !== 'string' ||
      typeof v.version !== 'string' ||
      typeof v.registeredAt !== 'number' ||
      typeof v.inputSchema !== 'object' ||
      v.inputSchema === null
    ) {
      return undefined;
    }
    const queue = typeof v.queue === 'string' && v.queue ? v.queue : undefined;
    return {
      name: v.name,
      version: v.version,
      ...(queue ? { queue } : {}),
      // A version that announced no queue name (an older worker) is served where it listened.
      queueName:
        typeof v.queueName === 'string' && QUEUE_NAME_PATTERN.test(v.queueName)
          ? v.queueName
          : legacyQueueNameFor({ queue }),
      attempts: typeof v.attempts === 'number' ? v.attempts : 1,
      backoffMs: typeof v.backoffMs === 'number' ? v.backoffMs : 1000,
      ...(typeof v.timeoutMs === 'number' && v.timeoutMs > 0 ? { timeoutMs: v.timeoutMs } : {}),
      ...(typeof v.rateLimit?.max === 'number' && typeof v.rateLimit.durationMs === 'number'
        ? { rateLimit: { max: v.rateLimit.max, durationMs: v.rateLimit.durationMs } }
        : {}),
      inputSchema: v.inputSchema,
      ...(typeof v.textInput === 'string' && v.textInput ? { textInput: v.textInput } : {}),
      registeredAt: v.registeredAt,
      lastSeenAt: lastSeenAt ?? v.registeredAt,
      workers,
    };
  } catch {
    return undefined;
  }
}
