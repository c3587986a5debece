/**
 * What a lease id carries: the shard and BullMQ queue of the job it leases, the job's id (the
 * task's) and the lock token its lease holds; and, on leases handed out since decision 68, what a
 * completion needs of the run (`run`), so completing reads nothing of the job. Nothing about a
 * lease is kept in a process's memory: any API replica acts on the job by its id with the token,
 * and BullMQ's lock (renewed by each heartbeat) is the lease.
 */
export interface LeaseRef {
  shard: number;
  queue: string;
  jobId: string;
  token: string;
  run?: LeaseRun | undefined;
}

/** The run a lease is: its type, when it started, its timeout (0: none) and its attempt. */
export interface LeaseRun {
  type: string;
  startedAt: number;
  timeoutMs: number;
  attempt: number;
}

/**
 * The lease id of a job taken with `token`: base64url, opaque to workers.
 * @example encodeLeaseId({ shard: 0, queue: 'tasks.x', jobId: 'abc', token: 't' }) // 'MAp0YXNr…'
 */
export function encodeLeaseId(ref: LeaseRef): string {
  const { run } = ref;
  const extra = run ? `\n${run.type}\n${run.startedAt}\n${run.timeoutMs}\n${run.attempt}` : '';
  return Buffer.from(`${ref.shard}\n${ref.queue}\n${ref.jobId}\n${ref.token}${extra}`).toString(
    'base64url',
  );
}

/** The lease `id` names, or `null` when it is not one this service made. */
export function decodeLeaseId(id: string): LeaseRef | null {
  if (id.length === 0 || id.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(id)) return null;
  const parts = Buffer.from(id, 'base64url').toString('utf8').split('\n');
  if (parts.length !== 4 && parts.length !== 8) return null;
  const [shard, queue, jobId, token] = parts as [string, string, string, string];
  if (!/^\d{1,4}$/.test(shard) || !queue || !jobId || !token) return null;
  const ref: LeaseRef = { shard: Number(shard), queue, jobId, token };
  if (parts.length === 8) {
    const [type, startedAt, timeoutMs, attempt] = parts.slice(4) as [
      string,
      string,
      string,
      string,
    ];
    if (!type || ![startedAt, timeoutMs, attempt].every((n) => /^\d{1,15}$/.test(n))) return null;
    ref.run = {
      type,
      startedAt: Number(startedAt),
      timeoutMs: Number(timeoutMs),
      attempt: Number(attempt),
    };
  }
  return ref;
}
