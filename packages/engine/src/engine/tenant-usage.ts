import { createHash } from 'node:crypto';

/** How long a tenant's usage on the other shards is trusted before it is read again. */
export const USAGE_FRESH_MS = 1000;

/** A tenant's open tasks and stored bytes on each shard, as read at `readAt`. */
export class TenantUsage {
  readonly readAt = Date.now();

  constructor(private readonly perShard: { open: number; bytes: number }[]) {}

  /** A task this process created on `shard` since the read. */
  counted(shard: number): void {
    const entry = this.perShard[shard];
    if (entry) entry.open += 1;
  }

  /** At half of the open-task cap or of the storage budget, or past it (0: none). */
  near(maxOpen: number, maxBytes: number): boolean {
    const { open, bytes } = this.except(-1);
    return (maxOpen > 0 && open * 2 >= maxOpen) || (maxBytes > 0 && bytes * 2 >= maxBytes);
  }

  /** The sum over every shard but `shard`. */
  except(shard: number): { open: number; bytes: number } {
    let open = 0;
    let bytes = 0;
    for (const [i, u] of this.perShard.entries()) {
      if (i === shard) continue;
      open += u.open;
      bytes += u.bytes;
    }
    return { open, bytes };
  }
}

/** The shard an idempotency key places its task on: fixed for a tenant, key and shard count. */
export function keyShard(tenant: string, key: string, count: number): number {
  const digest = createHash('sha256').update(tenant).update('\n').update(key).digest();
  return digest.readUInt32BE(0) % count;
}
