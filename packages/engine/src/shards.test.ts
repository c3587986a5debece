import keySlot from 'cluster-key-slot';
import { describe, expect, it } from 'vitest';
import { isTaskId } from '@longrun/core';
import { newTaskId, parseShardList, prefixSlot, shardOfTaskId, shardPrefix } from './shards.js';

describe('task ids name their shard', () => {
  it('keeps v4 ids on shard 0 and puts the shard in a v8 id elsewhere', () => {
    const zero = newTaskId(0);
    expect(zero[14]).toBe('4');
    expect(shardOfTaskId(zero)).toBe(0);
    for (const shard of [1, 7, 255, 1023]) {
      const id = newTaskId(shard);
      expect(isTaskId(id), id).toBe(true);
      expect(id[14]).toBe('8');
      expect('89ab').toContain(id[19]);
      expect(shardOfTaskId(id)).toBe(shard);
    }
  });

  it('reads an id made before shards (any v4) as shard 0', () => {
    expect(shardOfTaskId('3f2504e0-4f89-41d3-9a0c-0305e82c3301')).toBe(0);
  });

  it('makes unguessable ids: no two alike', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newTaskId(3)));
    expect(ids.size).toBe(10_000);
  });
});

describe('shard prefixes', () => {
  it('leaves shard 0 as the configured prefix', () => {
    expect(shardPrefix('{lr}', 0)).toBe('{lr}');
    expect(shardPrefix('longrun', 0)).toBe('longrun');
  });

  it('gives each shard a hash tag of its own, the same in every process', () => {
    const prefixes = Array.from({ length: 64 }, (_, i) => shardPrefix('{lr}', i));
    expect(new Set(prefixes).size).toBe(64);
    for (const p of prefixes) expect(p).toMatch(/^\{lr(\.s\d+\.\d+)?\}$/);
    expect(shardPrefix('app:{lr}:x', 5)).toMatch(/^app:\{lr\.s5\.\d+\}:x$/);
    // Without a hash tag (one Redis) a plain suffix.
    expect(shardPrefix('longrun', 3)).toBe('longrun.s3');
  });

  it('spreads consecutive shards evenly over the slot ring, for any count', () => {
    for (const prefix of ['{longrun}', '{lrtest}', '{acme-prod}']) {
      for (const count of [3, 6, 12, 24]) {
        // Three primaries holding equal slot ranges, as `redis-cli --cluster create` makes them.
        const perPrimary = [0, 0, 0];
        for (let i = 0; i < count; i++) {
          const slot = prefixSlot(shardPrefix(prefix, i));
          perPrimary[Math.min(2, Math.floor(slot / 5461))]! += 1;
        }
        const most = Math.max(...perPrimary);
        // Within one shard of an even share, however the first shard's slot falls... or two.
        expect(most, `${prefix} × ${count}: ${perPrimary.join('/')}`).toBeLessThanOrEqual(
          Math.ceil(count / 3) + 1,
        );
      }
    }
  });

  it('computes the slot from the hash tag', () => {
    expect(prefixSlot('{lr}')).toBe(keySlot('lr'));
  });
});

describe('parseShardList', () => {
  it('reads all, lists and ranges', () => {
    expect(parseShardList('all', 4)).toEqual([0, 1, 2, 3]);
    expect(parseShardList('', 2)).toEqual([0, 1]);
    expect(parseShardList('0-2, 5,1', 8)).toEqual([0, 1, 2, 5]);
  });

  it('names what is wrong', () => {
    expect(() => parseShardList('x', 4)).toThrow(/"x" is not a shard index/);
    expect(() => parseShardList('3-1', 4)).toThrow(/low to high/);
    expect(() => parseShardList('2000', 4)).toThrow(/past the largest/);
  });
});
