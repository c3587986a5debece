import type { JobTypeDirectory } from '../registry/job-type-directory.js';
import type { TickOutcome } from './outcomes.js';
import type { Shard } from './shard.js';
import type { ShardSet } from './shard-set.js';
import type { SubmitOptions } from './submit.js';
import { keyShard, TenantUsage, USAGE_FRESH_MS } from './tenant-usage.js';

/** The tenant caps a submit is held to over all shards (0: none). */
export interface WholeCaps {
  maxOpenTasks: number;
  maxBytes: number;
}

/**
 * Where a submit goes, and how much of a tenant's caps it may use there. The task goes to the
 * next shard in turn; with an idempotency key, to the shard the key names, so a replay finds its
 * task. A shard where the tenant is at its share of a cap passes the task on to the next, so the
 * cap is the whole of the shards' shares.
 */
export class Placement {
  /** Each tenant's usage on every shard, as last read (see `usageElsewhere`). */
  private readonly usage = new Map<string, TenantUsage>();

  constructor(
    private readonly shards: ShardSet,
    private readonly types: JobTypeDirectory,
    /** The caps as they are now (the budget may change while the API runs). */
    private readonly caps: () => WholeCaps,
    private readonly redis: <T>(operation: () => Promise<T>) => Promise<T>,
  ) {}

  async place(
    tenant: string,
    body: unknown,
    opts: SubmitOptions & { scheduleId?: string },
  ): Promise<TickOutcome> {
    const count = this.shards.configured.length;
    const whole = this.caps();
    if (count === 1) {
      const caps = opts?.caps ?? whole;
      return this.shards.first.submitter.submit(tenant, body, { ...opts, caps });
    }
    let shard: Shard;
    if (this.pinned(body) || opts.scheduleId !== undefined) shard = this.shards.first;
    else if (opts.idempotencyKey !== undefined) {
      shard = this.shards.configured[keyShard(tenant, opts.idempotencyKey, count)] as Shard;
    } else shard = this.shards.next();
    const wholeOpen = whole.maxOpenTasks;
    const wholeBytes = whole.maxBytes;
    if (wholeOpen === 0 && wholeBytes === 0) return shard.submitter.submit(tenant, body, opts);
    // The tenant's caps hold over all shards: this shard's create may use what the others leave.
    const others = await this.usageElsewhere(tenant, shard, whole);
    const leftOpen = wholeOpen - others.open;
    const leftBytes = wholeBytes - others.bytes;
    if (wholeOpen > 0 && leftOpen <= 0) {
      return { kind: 'full', openTasks: others.open, cap: wholeOpen };
    }
    if (wholeBytes > 0 && leftBytes <= 0) {
      return {
        kind: 'overBudget',
        usedBytes: others.bytes,
        maxBytes: wholeBytes,
        retryAfterMs: 1000,
      };
    }
    const caps = {
      maxOpenTasks: wholeOpen === 0 ? 0 : leftOpen,
      maxBytes: wholeBytes === 0 ? 0 : leftBytes,
    };
    const outcome = await shard.submitter.submit(tenant, body, { ...opts, caps });
    if (outcome.kind === 'created') this.usage.get(tenant)?.counted(shard.number);
    if (outcome.kind === 'full') {
      return { ...outcome, openTasks: outcome.openTasks + others.open, cap: wholeOpen };
    }
    if (outcome.kind === 'overBudget') {
      return { ...outcome, usedBytes: outcome.usedBytes + others.bytes, maxBytes: wholeBytes };
    }
    return outcome;
  }

  /**
   * What the tenant holds on the shards other than `shard` (open tasks, stored bytes). Far from
   * its open-task cap and its storage budget (under half of each, as last read) a read up to a
   * second old will do, counted up as this process creates tasks meanwhile; nearer, every submit
   * reads every shard (one pipelined read each), so a cap holds exactly where it bites, and a
   * tenant far from it costs one read per other shard a second, not per submit. (The budget is
   * on by default, so reading at every submit for it alone would tax every sharded deployment;
   * far from it, a tenant may pass it by what it stores on other shards within that second.)
   */
  private async usageElsewhere(
    tenant: string,
    shard: Shard,
    whole: WholeCaps,
  ): Promise<{ open: number; bytes: number }> {
    let usage = this.usage.get(tenant);
    const fresh = usage && Date.now() - usage.readAt <= USAGE_FRESH_MS;
    // Near a cap, stored bytes grow with results written elsewhere, unseen here: read every time.
    const exact = usage?.near(whole.maxOpenTasks, whole.maxBytes) === true;
    if (!usage || !fresh || exact) {
      const read = await this.redis(() =>
        Promise.all(this.shards.configured.map((s) => s.store.tenantUsage(tenant))),
      );
      usage = new TenantUsage(read);
      if (this.usage.size >= 10_000) this.usage.clear();
      this.usage.set(tenant, usage);
    }
    return usage.except(shard.number);
  }

  /**
   * A type whose runs are limited fleet-wide (a rate limit, or a `LONGRUN_TYPE_CONCURRENCY` cap)
   * runs on shard 0 only: BullMQ holds such limits per queue, and one queue holds them exactly.
   */
  private pinned(body: unknown): boolean {
    const type = (body as { type?: unknown } | null)?.type;
    if (typeof type !== 'string') return false;
    const definition = this.types.get(type);
    return definition !== undefined && (!!definition.rateLimit || !!definition.fleetConcurrency);
  }
}
