import type { Redis } from 'ioredis';
import { FIELD, TERMINAL_STATUSES, type TaskStatus } from '@longrun/core';
import type { TaskKeys } from './keys.js';
import { drainLegacyTenants, dropIdleTenant } from './commands/index.js';

/** Tenant names read per step of the walk. */
const TENANT_PAGE = 100;

/** Where a sweep stopped: a tenant, and the last entry of its open set it took. */
interface WalkCursor {
  tenant: string;
  /** The entry's score (the task's expiry) and member (its id): the set's own order. */
  score: number;
  id: string;
}

/** An open-set entry to check. */
export interface Entry {
  id: string;
  tenant: string;
}

/**
 * The reconciler's walk over every open task: the open sets of the tenants the create script
 * names (which terminal events empty), a batch per sweep from a cursor saved in Redis, so that
 * successive sweeps, in whichever process holds the sweep lock, cover them all and start over.
 */
export class OpenTaskWalk {
  constructor(
    private readonly connection: Redis,
    private readonly keys: TaskKeys,
  ) {}

  /** The next `batch` open-set entries after the saved cursor; the cursor moves past them. */
  async next(batch: number): Promise<Entry[]> {
    const redis = this.connection;
    const { entries, next } = await this.walk(
      parseCursor(await redis.get(this.keys.reconcilerCursor)),
      batch,
    );
    await redis.set(this.keys.reconcilerCursor, next ? JSON.stringify(next) : '');
    return entries;
  }

  /**
   * Up to `batch` open-set entries after `cursor`, tenant after tenant in name order (read a page
   * of names at a time, so a sweep never reads every tenant), and where the next sweep goes on
   * (none: the walk reached the end and starts over). A tenant whose open set is gone leaves the
   * tenants on the way.
   */
  private async walk(
    cursor: WalkCursor | undefined,
    batch: number,
  ): Promise<{ entries: Entry[]; next: WalkCursor | undefined }> {
    const entries: Entry[] = [];
    // From the cursor's own tenant, which may hold more entries after the cursor.
    let from = cursor ? `[${cursor.tenant}` : '-';
    for (;;) {
      const tenants = await this.connection.zrangebylex(
        this.keys.openTenants,
        from,
        '+',
        'LIMIT',
        0,
        TENANT_PAGE,
      );
      for (const tenant of tenants) {
        const after = cursor?.tenant === tenant ? cursor : undefined;
        const page = await this.openPage(tenant, after, batch - entries.length);
        for (const id of page.ids) entries.push({ id, tenant });
        if (!page.more && !after && page.ids.length === 0) await this.dropIfIdle(tenant);
        if (entries.length >= batch) return { entries, next: page.last ?? after };
      }
      if (tenants.length < TENANT_PAGE) return { entries, next: undefined };
      from = `(${tenants[tenants.length - 1]}`;
    }
  }

  /**
   * Up to `n` ids of `tenant`'s open set after `after` (in the set's order: by expiry, then id),
   * the last one taken, and whether the set may hold more.
   */
  private async openPage(
    tenant: string,
    after: WalkCursor | undefined,
    n: number,
  ): Promise<{ ids: string[]; last: WalkCursor | undefined; more: boolean }> {
    const key = this.keys.openTasks(tenant);
    const ids: string[] = [];
    let last: WalkCursor | undefined;
    // From the cursor's score on; entries with that score up to its id were taken before.
    for (let offset = 0; ids.length < n;) {
      const want = n - ids.length;
      const flat = await this.connection.zrangebyscore(
        key,
        after ? String(after.score) : '-inf',
        '+inf',
        'WITHSCORES',
        'LIMIT',
        offset,
        want,
      );
      offset += flat.length / 2;
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const id = flat[i] as string;
        const score = Number(flat[i + 1]);
        if (after && score === after.score && id <= after.id) continue;
        ids.push(id);
        last = { tenant, score, id };
      }
      if (flat.length / 2 < want) return { ids, last, more: false };
    }
    return { ids, last, more: true };
  }

  /** Takes `tenant` out of the set of tenants if its open set is gone (atomically: see the script). */
  private async dropIfIdle(tenant: string): Promise<void> {
    await dropIdleTenant.run(this.connection, {
      keys: { openTenants: this.keys.openTenants, open: this.keys.openTasks(tenant) },
      args: { tenant },
    });
  }

  /**
   * Moves what older versions left over to the walk: the plain set of tenants (its names join
   * the sorted one), and the set of every open task (`legacyAllOpen`: the tenants of the open
   * ones join, their open sets already hold them). Each leaves its old key a batch at a time;
   * the keys are gone once empty.
   */
  async drainLegacy(batch: number): Promise<void> {
    const redis = this.connection;
    await drainLegacyTenants.run(redis, {
      keys: { legacy: this.keys.legacyOpenTenants, openTenants: this.keys.openTenants },
      args: { batch },
    });
    const ids = await redis.zrange(this.keys.legacyAllOpen, 0, batch - 1);
    if (ids.length === 0) return;
    const pipeline = redis.pipeline();
    for (const id of ids) pipeline.hmget(this.keys.task(id), FIELD.tenant, FIELD.status);
    const replies = (await pipeline.exec()) ?? [];
    const tenants = new Set<string>();
    for (const [, fields] of replies) {
      const [tenant, status] = (fields ?? []) as (string | null)[];
      if (tenant && status && !TERMINAL_STATUSES.includes(status as TaskStatus))
        tenants.add(tenant);
    }
    if (tenants.size > 0) {
      await redis.zadd(this.keys.openTenants, ...[...tenants].flatMap((t) => [0, t]));
    }
    await redis.zrem(this.keys.legacyAllOpen, ...ids);
  }
}

/** The saved cursor, or none (the start) when there is none or it is an older version's. */
function parseCursor(saved: string | null): WalkCursor | undefined {
  if (!saved) return undefined;
  try {
    const c = JSON.parse(saved) as Partial<WalkCursor>;
    if (typeof c.tenant === 'string' && typeof c.score === 'number' && typeof c.id === 'string') {
      return { tenant: c.tenant, score: c.score, id: c.id };
    }
  } catch {
    // an id, as the walk over the set of every open task saved it
  }
  return undefined;
}
