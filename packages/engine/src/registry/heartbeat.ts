import type { TaskWorkerLogger } from '../worker/job-data.js';
import type { JobTypeDescriptor } from './describe.js';
import type { JobTypeRegistry } from './job-type-registry.js';

export interface RegistryHeartbeatOptions {
  registry: JobTypeRegistry;
  workerId: string;
  descriptors: readonly JobTypeDescriptor[];
  /** How often the worker says it is alive (default 5 s); it counts as live for 3 beats. */
  intervalMs?: number | undefined;
  logger?: TaskWorkerLogger | undefined;
}

/** Every this many beats, a worker also drops versions nobody has served for a day. */
const PRUNE_EVERY = 720;

/**
 * A worker's entry in the job-type registry: published at start, renewed every beat, withdrawn
 * at close. A worker that dies without closing stops counting after three missed beats.
 */
export class RegistryHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private beats = 0;

  constructor(private readonly opts: RegistryHeartbeatOptions) {}

  get intervalMs(): number {
    return this.opts.intervalMs ?? 5000;
  }

  /** Publishes now (throws if Redis refuses), then keeps publishing in the background. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => {
      this.beat().catch((err: unknown) =>
        this.opts.logger?.warn({ err }, 'job-type registry heartbeat failed'),
      );
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Publishes now, between beats (e.g. Redis came back, maybe without the registry). */
  async beatNow(): Promise<void> {
    if (this.timer) await this.beat();
  }

  /**
   * Stops beating and withdraws this worker from the registry: best effort, for at most a
   * second (with Redis away its entry lapses by itself after three beats).
   */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    const withdrawn = this.opts.registry
      .withdraw(this.opts.workerId, this.opts.descriptors)
      .catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([withdrawn, new Promise((r) => (timer = setTimeout(r, 1000)))]);
    clearTimeout(timer);
  }

  private async beat(): Promise<void> {
    const { registry, workerId, descriptors } = this.opts;
    await registry.publish(workerId, descriptors, this.intervalMs * 3);
    if (this.beats++ % PRUNE_EVERY === 0) await registry.prune();
  }
}
