import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * What a lease id carries: the shard and BullMQ queue of the job it leases, the job's id (the
 * task's), the lock token its lease holds, and what a completion needs of the run (`run`, decision
 * 68), so completing reads nothing of the job. Nothing about a lease is kept in a process's
 * memory: any API replica acts on the job by its id with the token, and BullMQ's lock (renewed by
 * each heartbeat) is the lease.
 */
export interface LeaseRef {
  shard: number;
  queue: string;
  jobId: string;
  token: string;
  run: LeaseRun;
}

/** The run a lease is: its type, when it started, its timeout (0: none) and its attempt. */
export interface LeaseRun {
  type: string;
  startedAt: number;
  timeoutMs: number;
  attempt: number;
}

/** Bytes of the HMAC kept in an id: 128 bits, beyond guessing. */
const MAC_BYTES = 16;

/**
 * Lease ids signed for the worker key they were handed to (decision 79): an HMAC-SHA256 of the
 * worker's name and everything the id carries, with a secret the API replicas share in Redis.
 * A forged id, one with a fact changed (its timeout, type, queue, shard, job), or another worker
 * key's lease fails the check before anything is built from it: nothing a worker sends chooses a
 * queue to open or a run's facts, and checking costs no Redis call.
 */
export class LeaseIds {
  constructor(private readonly secret: Buffer) {}

  /**
   * The lease id of a job taken with `ref.token` for `worker`: base64url, opaque to workers.
   * @example ids.encode('py', { shard: 0, queue: 'tasks.x', jobId: 'abc', token: 't', run }) // 'MAp0YXNr…'
   */
  encode(worker: string, ref: LeaseRef): string {
    const { run } = ref;
    const body = [ref.shard, ref.queue, ref.jobId, ref.token, run.type, run.startedAt]
      .concat([run.timeoutMs, run.attempt])
      .join('\n');
    return Buffer.from(`${body}\n${this.mac(worker, body)}`).toString('base64url');
  }

  /** The lease `id` names, or `null` when it is not one this service made for `worker`. */
  decode(worker: string, id: string): LeaseRef | null {
    if (id.length === 0 || id.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(id)) return null;
    const text = Buffer.from(id, 'base64url').toString('utf8');
    const at = text.lastIndexOf('\n');
    const body = text.slice(0, Math.max(at, 0));
    const given = Buffer.from(text.slice(at + 1), 'base64url');
    const expected = Buffer.from(this.mac(worker, body), 'base64url');
    if (at < 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return null;
    }
    const parts = body.split('\n');
    if (parts.length !== 8) return null;
    const [shard, queue, jobId, token, type, startedAt, timeoutMs, attempt] = parts as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    return {
      shard: Number(shard),
      queue,
      jobId,
      token,
      run: {
        type,
        startedAt: Number(startedAt),
        timeoutMs: Number(timeoutMs),
        attempt: Number(attempt),
      },
    };
  }

  private mac(worker: string, body: string): string {
    return createHmac('sha256', this.secret)
      .update(`${worker}\n${body}`)
      .digest()
      .subarray(0, MAC_BYTES)
      .toString('base64url');
  }
}

/**
 * The lease-id secret under `key`: made (32 random bytes) by the first API process that needs
 * it, then read by every replica, so a lease taken on one is served by another. One round trip.
 * @example new LeaseIds(await leaseSecret(redis, taskKeys('longrun').leaseSecret))
 */
export async function leaseSecret(redis: Redis, key: string): Promise<Buffer> {
  const replies = await redis
    .pipeline()
    .set(key, randomBytes(32).toString('base64'), 'NX')
    .get(key)
    .exec();
  const failed = replies?.find(([err]) => err);
  if (failed) throw failed[0] as Error;
  const secret = replies?.[1]?.[1];
  if (typeof secret !== 'string' || secret.length < 16) throw new Error('no lease secret read');
  return Buffer.from(secret, 'base64');
}
