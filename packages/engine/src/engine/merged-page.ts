import type { HandleFields } from '@longrun/core';
import { indexMember } from '../keys.js';
import type { ListQuery } from '../task-index.js';
import type { Shard } from './shard.js';

/**
 * One page of a tenant's tasks across shards, newest first. Each shard's index orders its tasks
 * by `<inverted time>:<id>`, one order for all shards, so a page is the shards' pages merged and
 * the cursor (the last member given) means the same on every shard. A shard that stopped early
 * (its scan budget spent while filtering) bounds the page: nothing past its place is given, so
 * the next page misses none of its tasks.
 */
export async function mergedPage(
  shards: readonly Shard[],
  tenant: string,
  query: ListQuery,
): Promise<{ tasks: HandleFields[]; next: string | null }> {
  if (shards.length === 1) return (shards[0] as Shard).index.page(tenant, query);
  const pages = await Promise.all(shards.map((s) => s.index.page(tenant, query)));
  const entries = pages
    .flatMap((p) => p.tasks)
    .map((task) => ({ task, member: indexMember(task.createdAt, task.id) }))
    .sort((a, b) => (a.member < b.member ? -1 : a.member > b.member ? 1 : 0));
  // The earliest place a shard stopped before its end: the page may not go past it.
  let bound: string | null = null;
  for (const p of pages) {
    if (p.next !== null && (bound === null || p.next < bound)) bound = p.next;
  }
  const given = entries.filter((e) => bound === null || e.member <= bound).slice(0, query.limit);
  const last = given.at(-1);
  const full = given.length === query.limit && last !== undefined;
  const next = full ? last.member : bound;
  return { tasks: given.map((e) => e.task), next };
}
