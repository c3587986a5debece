import type { JobTypeDescriptor } from '../registry/describe.js';
import type { JobTypeRegistry, RegisteredJobType } from '../registry/job-type-registry.js';
import type { TaskWorkerLogger } from '../worker/job-data.js';

/** A worker's registry entry lasts this long after its last lease request. */
const LIVE_MS = 45_000;
/** Its registry entry is renewed at most this often per worker and type. */
const LIVE_EVERY_MS = 5_000;

/**
 * HTTP workers in the job-type registry: an SDK worker's heartbeat publishes its types every
 * 5 s; an HTTP worker's lease requests do it for them (at most every 5 s per worker and type,
 * live for 45 s), so `GET /v1/job-types` counts the workers polling a type.
 */
export class WorkerPresence {
  private readonly lastLive = new Map<string, number>();

  constructor(
    private readonly registry: JobTypeRegistry,
    private readonly logger: TaskWorkerLogger,
  ) {}

  /** Publishes a type `worker` registers, as an SDK worker's first heartbeat does. */
  async register(worker: string, descriptor: JobTypeDescriptor): Promise<void> {
    await this.registry.publish(workerId(worker), [descriptor], LIVE_MS);
    this.lastLive.set(`${worker} ${descriptor.name}`, Date.now());
  }

  /** Counts `worker` as live for `types` (in the background; a failure is logged). */
  seen(worker: string, types: readonly RegisteredJobType[]): void {
    const now = Date.now();
    const due = types.filter(
      (t) => (this.lastLive.get(`${worker} ${t.name}`) ?? 0) + LIVE_EVERY_MS <= now,
    );
    if (due.length === 0) return;
    if (this.lastLive.size > 10_000) this.lastLive.clear();
    for (const t of due) this.lastLive.set(`${worker} ${t.name}`, now);
    void this.registry
      .publish(workerId(worker), due.map(descriptorOf), LIVE_MS)
      .catch((err: unknown) =>
        this.logger.warn({ err }, 'could not renew an HTTP worker in the registry'),
      );
  }
}

/** An HTTP worker's id in the registry: its name from `LONGRUN_WORKER_KEYS`, marked as such. */
function workerId(worker: string): string {
  return `http:${worker}`;
}

/** What the registry holds of a version, without what `read` adds (counts, dates, versions). */
function descriptorOf(t: RegisteredJobType): JobTypeDescriptor {
  return {
    name: t.name,
    version: t.version,
    ...(t.queue ? { queue: t.queue } : {}),
    queueName: t.queueName,
    attempts: t.attempts,
    backoffMs: t.backoffMs,
    ...(t.timeoutMs ? { timeoutMs: t.timeoutMs } : {}),
    ...(t.rateLimit ? { rateLimit: t.rateLimit } : {}),
    inputSchema: t.inputSchema,
  };
}
