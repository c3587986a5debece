import { randomBytes, randomUUID } from 'node:crypto';
import keySlot from 'cluster-key-slot';

/**
 * Shards (decision 37): the task space split over hash tags so that a Redis Cluster's primaries
 * share it. Shard 0 is the configured prefix itself (so `LONGRUN_SHARDS=1` is what longrun always
 * was); shard i > 0 has a prefix of its own whose hash tag is chosen to land where the first
 * shards' slots are not (see `shardPrefix`). A task id names its shard, so one task's keys stay
 * in one slot and any process finds them without knowing how many shards there are.
 */

/** Most shards a deployment may have (`LONGRUN_SHARDS`); the id holds the index in 16 bits. */
export const MAX_SHARDS = 1024;

const SLOTS = 16_384;
/** Fractional part of the golden ratio: consecutive shards' slots spread evenly for any count. */
const GOLDEN = 0.618_033_988_749_895;
/** How near its target slot a shard's tag must hash (about 1/256 of the ring either side). */
const SLOT_WINDOW = 32;

const prefixes = new Map<string, string>();

/**
 * The key prefix of shard `index` for the configured `prefix`.
 *
 * With a hash tag (`{lr}`), shard i's tag is `lr.s<i>.<k>`, k the first number whose tag hashes
 * within a few slots of `slot(lr) + i·0.618·16384` (mod 16384): the golden-ratio sequence puts
 * any number of consecutive shards evenly around the slot ring, so a cluster whose primaries hold
 * equal ranges of slots gets an even share of shards, within one per primary. It depends on
 * nothing but the prefix and i: every process computes the same, and adding shards moves none.
 * Without a hash tag (one Redis), the prefix is `<prefix>.s<i>`.
 * @example shardPrefix('{lr}', 0) // '{lr}'
 */
export function shardPrefix(prefix: string, index: number): string {
  if (index === 0) return prefix;
  const memo = `${index} ${prefix}`;
  let found = prefixes.get(memo);
  if (found === undefined) {
    found = computeShardPrefix(prefix, index);
    prefixes.set(memo, found);
  }
  return found;
}

function computeShardPrefix(prefix: string, index: number): string {
  const open = prefix.indexOf('{');
  const close = open === -1 ? -1 : prefix.indexOf('}', open + 1);
  if (open === -1 || close <= open + 1) return `${prefix}.s${index}`;
  const tag = prefix.slice(open + 1, close);
  const target = (keySlot(tag) + Math.round(((index * GOLDEN) % 1) * SLOTS)) % SLOTS;
  for (let k = 0; k < 1_000_000; k++) {
    const candidate = `${tag}.s${index}.${k}`;
    const distance = Math.abs(keySlot(candidate) - target);
    if (Math.min(distance, SLOTS - distance) <= SLOT_WINDOW) {
      return `${prefix.slice(0, open + 1)}${candidate}${prefix.slice(close)}`;
    }
  }
  /* c8 ignore next: 1 in 256 candidates qualifies; a million misses do not happen */
  throw new Error(`no hash tag found for shard ${index} of prefix ${prefix}`);
}

/** The Redis Cluster slot a prefix's keys live in (its hash tag's). */
export function prefixSlot(prefix: string): number {
  return keySlot(`${prefix}:x`);
}

/**
 * A new task id on shard `shard`: on shard 0 a random v4 UUID (as ids always were), elsewhere a
 * v8 UUID (RFC 9562, custom layout) whose first 16 bits are the shard and the other 106 random.
 */
export function newTaskId(shard: number): string {
  if (shard === 0) return randomUUID();
  const bytes = randomBytes(16);
  bytes.writeUInt16BE(shard, 0);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The shard a task id names (0 for any id that is not a v8 one: every id made before shards). */
export function shardOfTaskId(id: string): number {
  if (id.charCodeAt(14) !== 0x38 /* '8' */) return 0;
  const shard = Number.parseInt(id.slice(0, 4), 16);
  return Number.isInteger(shard) && shard < MAX_SHARDS ? shard : 0;
}

/**
 * Which shards a worker serves: `all` (every one of `count`), or a list of indexes and ranges
 * (`0,2`, `0-3,8`). Throws a message naming what is wrong.
 * @example parseShardList('0-2,5', 8) // [0, 1, 2, 5]
 */
export function parseShardList(spec: string, count: number): number[] {
  const text = spec.trim();
  if (text === '' || text === 'all') return Array.from({ length: count }, (_, i) => i);
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) throw new Error(`"${part.trim()}" is not a shard index or a range like 0-3`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw new Error(`"${part.trim()}": a range goes from low to high`);
    if (to >= MAX_SHARDS) throw new Error(`shard ${to} is past the largest, ${MAX_SHARDS - 1}`);
    for (let i = from; i <= to; i++) out.add(i);
  }
  return [...out].sort((a, b) => a - b);
}
