import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { FIELD, LIFECYCLE, TERMINAL_STATUSES } from '@longrun/core';
import '../commands/index.js';
import { coreConstantsLua } from './core-include.js';
import { expandIncludes, LUA_DIR, parseHeader, provideInclude } from './loader.js';
import { ALL_SCRIPTS } from './script.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const files = readdirSync(LUA_DIR)
  .filter((f) => f.endsWith('.lua'))
  .map((f) => f.slice(0, -4));

describe('the Lua layer', () => {
  it('has a typed wrapper for every script file, and a file for every wrapper', () => {
    expect(files.length).toBeGreaterThan(0);
    expect(ALL_SCRIPTS.map((s) => s.spec.file).sort()).toEqual([...files].sort());
  });

  it.each(ALL_SCRIPTS.map((s) => [s.spec.file, s] as const))(
    '%s: its header names the KEYS and ARGV its wrapper sends, in order',
    (file, script) => {
      const header = parseHeader(readFileSync(`${LUA_DIR}${file}.lua`, 'utf8'));
      expect(header.keys, 'KEYS').toEqual([...script.spec.keys]);
      expect(header.args, 'ARGV').toEqual([...script.spec.args]);
      expect(header.itemKeys, 'ITEM.KEYS').toEqual([...(script.spec.itemKeys ?? [])]);
      expect(header.itemArgs, 'ITEM.ARGV').toEqual([...(script.spec.itemArgs ?? [])]);
    },
  );

  it.each(ALL_SCRIPTS.map((s) => [s.spec.file, s] as const))(
    '%s: compiles in Redis with its includes, none left unexpanded',
    async (_file, script) => {
      expect(script.source).not.toMatch(/@include/);
      const sha = (await redis.script('LOAD', script.source)) as string;
      expect(sha).toMatch(/^[0-9a-f]{40}$/);
    },
  );

  it('reads a header out of order as an error, so a renumbering slip cannot pass', () => {
    expect(() => parseHeader('--[[\n KEYS[1] a\n KEYS[3] b\n]]')).toThrow(/out of order/);
  });

  it('expands an include once, and names a missing one', () => {
    provideInclude('test/twice', () => '--- @include "generated/core"\nlocal X = 1');
    provideInclude('test/missing', () => '--- @include "includes/no-such-file"');
    const expanded = expandIncludes(
      '--- @include "generated/core"\n--- @include "test/twice"',
      'test',
    );
    expect(expanded.match(/local F = /g)).toHaveLength(1);
    expect(() => expandIncludes('--- @include "test/missing"', 'test')).toThrow(
      /no-such-file.*not found/,
    );
  });
});

describe('generated/core', () => {
  it('defines every field, terminal status and lifecycle row of core, evaluated by Redis', async () => {
    const lua = `${coreConstantsLua()}
      return cjson.encode({F = F, TERMINAL = TERMINAL, LIFECYCLE = LIFECYCLE})`;
    const got = JSON.parse((await redis.eval(lua, 0)) as string) as {
      F: Record<string, string>;
      TERMINAL: Record<string, boolean>;
      LIFECYCLE: Record<
        string,
        { from: Record<string, boolean> | unknown[]; to?: string; message?: string }
      >;
    };
    expect(got.F).toEqual(FIELD);
    expect(Object.keys(got.TERMINAL).sort()).toEqual([...TERMINAL_STATUSES].sort());
    for (const [event, row] of Object.entries(LIFECYCLE)) {
      const from = got.LIFECYCLE[event]?.from;
      // cjson writes an empty table as {} and a set as its keys
      const statuses = Array.isArray(from) ? from : Object.keys(from ?? {});
      expect(statuses.sort(), event).toEqual([...row.from].sort());
      expect(got.LIFECYCLE[event]?.to ?? null, event).toBe(row.to);
      expect(got.LIFECYCLE[event]?.message, event).toBe(
        'statusMessage' in row ? row.statusMessage : undefined,
      );
    }
  });
});
