/**
 * What a lease id carries: the shard and BullMQ queue of the job it leases, the job's id (the
 * task's) and the lock token its lease holds. Nothing about a lease is kept in a process's
 * memory: any API replica reads the job by its id and acts on it with the token, and BullMQ's
 * lock (renewed by each heartbeat) is the lease.
 */
export interface LeaseRef {
  shard: number;
  queue: string;
  jobId: string;
  token: string;
}

/**
 * The lease id of a job taken with `token`: base64url, opaque to workers.
 * @example encodeLeaseId({ shard: 0, queue: 'tasks.x', jobId: 'abc', token: 't' }) // 'MAp0YXNr…'
 */
export function encodeLeaseId(ref: LeaseRef): string {
  return Buffer.from(`${ref.shard}\n${ref.queue}\n${ref.jobId}\n${ref.token}`).toString(
    'base64url',
  );
}

/** The lease `id` names, or `null` when it is not one this service made. */
export function decodeLeaseId(id: string): LeaseRef | null {
  if (id.length === 0 || id.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(id)) return null;
  const parts = Buffer.from(id, 'base64url').toString('utf8').split('\n');
  if (parts.length !== 4) return null;
  const [shard, queue, jobId, token] = parts as [string, string, string, string];
  if (!/^\d{1,4}$/.test(shard) || !queue || !jobId || !token) return null;
  return { shard: Number(shard), queue, jobId, token };
}
