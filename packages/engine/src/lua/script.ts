import type { Redis } from 'ioredis';
import { loadLua } from './loader.js';
import './core-include.js';
import './keys-include.js';

/** A value a script takes in ARGV: ioredis sends numbers as their decimal text. */
export type LuaArg = string | number | Buffer;

/**
 * What every script replies (one convention for all): an array whose first element is a code
 * word, `'ok'` or the name of a refusal (`'full'`, `'dup'`, …), followed by that code's values.
 */
export type LuaReply = [string, ...unknown[]];

/** One item of a script over a batch: its keys and arguments, by the names the script gives. */
export interface LuaItem<IK extends string, IA extends string> {
  keys: Record<IK, string>;
  args: Record<IA, LuaArg>;
}

/** A script's declaration: the file, the names of its KEYS and ARGV in order, its decoder. */
export interface ScriptSpec<
  K extends string,
  A extends string,
  IK extends string,
  IA extends string,
  R,
> {
  /** `lua/<file>.lua`; also names the command ioredis defines (`longrun_<file>`). */
  file: string;
  keys: readonly K[];
  args: readonly A[];
  /** For a script over a batch: the keys and arguments each item repeats, after the fixed ones. */
  itemKeys?: readonly IK[];
  itemArgs?: readonly IA[];
  /**
   * For a script that takes a list of further keys after its items (create-many's BullMQ key
   * groups): what they are, for the reader. The body reads them as `rest_key(1)`, `rest_key(2)`…
   * (the items are then counted from ARGV, so `itemArgs` must be given).
   */
  restKeys?: string;
  /** The reply, decoded once here so that callers see one typed value. */
  decode(reply: LuaReply): R;
}

/** What a call passes: keys and arguments by name, and the items of a batch script. */
export interface ScriptCall<
  K extends string,
  A extends string,
  IK extends string,
  IA extends string,
> {
  keys: Record<K, string>;
  args: Record<A, LuaArg>;
  items?: readonly LuaItem<IK, IA>[];
  /** The keys after the items (`restKeys`). */
  restKeys?: readonly string[];
}

/** A typed script: `run` sends it by hash (EVALSHA, loaded on first use) and decodes the reply. */
export interface LuaScript<
  K extends string,
  A extends string,
  IK extends string,
  IA extends string,
  R,
> {
  readonly spec: ScriptSpec<K, A, IK, IA, R>;
  /** The Lua Redis runs: the generated prologue, then the file with its includes expanded. */
  readonly source: string;
  run(redis: Redis, call: ScriptCall<K, A, IK, IA>): Promise<R>;
}

/** Every script defined so far (the tests check each against its file's header and compile it). */
export const ALL_SCRIPTS: LuaScript<string, string, string, string, unknown>[] = [];

/**
 * The locals a script reads its inputs through, generated from the declaration so that the Lua
 * never counts positions: `KEY.task`, `ARG.ttl`, and for a batch `ITEMS` (how many) with
 * `item_keys(i)` / `item_args(i)` giving item i's by name.
 */
function prologue(spec: ScriptSpec<string, string, string, string, unknown>): string {
  const table = (names: readonly string[], from: string, base: string) =>
    `{${names.map((n, i) => `${n} = ${from}[${base}${i + 1}]`).join(', ')}}`;
  const lines = [
    `local KEY = ${table(spec.keys, 'KEYS', '')}`,
    `local ARG = ${table(spec.args, 'ARGV', '')}`,
  ];
  const itemKeys = spec.itemKeys ?? [];
  const itemArgs = spec.itemArgs ?? [];
  if (itemKeys.length > 0 || itemArgs.length > 0) {
    const nk = spec.keys.length;
    const na = spec.args.length;
    const count =
      itemKeys.length > 0 && !spec.restKeys
        ? `(#KEYS - ${nk}) / ${itemKeys.length}`
        : `(#ARGV - ${na}) / ${itemArgs.length}`;
    lines.push(
      `local ITEMS = ${count}`,
      `local function item_keys(i) local b = ${nk} + (i - 1) * ${itemKeys.length} return ${table(itemKeys, 'KEYS', 'b + ')} end`,
      `local function item_args(i) local b = ${na} + (i - 1) * ${itemArgs.length} return ${table(itemArgs, 'ARGV', 'b + ')} end`,
    );
    if (spec.restKeys) {
      lines.push(
        `local function rest_key(j) return KEYS[${nk} + ITEMS * ${itemKeys.length} + j] end`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

interface WithCommands {
  [command: string]: unknown;
  defineCommand(name: string, definition: { lua: string }): void;
}

/**
 * Declares a script of `lua/<file>.lua`. Its source is read on first use; `run` defines it on the
 * connection once (ioredis then sends EVALSHA, falling back to EVAL after a Redis restart).
 * @example
 * const announce = defineScript({ file: 'announce-shards', keys: ['count'], args: ['count'],
 *   decode: ([, n]) => Number(n) });
 * await announce.run(redis, { keys: { count: 'p:shards' }, args: { count: 4 } });
 */
export function defineScript<
  K extends string,
  A extends string,
  R,
  IK extends string = never,
  IA extends string = never,
>(spec: ScriptSpec<K, A, IK, IA, R>): LuaScript<K, A, IK, IA, R> {
  const command = `longrun_${spec.file.replace(/[^A-Za-z0-9]/g, '_')}`;
  let source: string | undefined;
  const script: LuaScript<K, A, IK, IA, R> = {
    spec,
    get source() {
      source ??= prologue(spec) + loadLua(spec.file);
      return source;
    },
    async run(redis, call) {
      const client = redis as unknown as WithCommands;
      if (typeof client[command] !== 'function') {
        client.defineCommand(command, { lua: script.source });
      }
      const keys: string[] = spec.keys.map((k) => call.keys[k]);
      const args: LuaArg[] = spec.args.map((a) => call.args[a]);
      for (const item of call.items ?? []) {
        for (const k of spec.itemKeys ?? []) keys.push(item.keys[k]);
        for (const a of spec.itemArgs ?? []) args.push(item.args[a]);
      }
      if (call.restKeys) keys.push(...call.restKeys);
      const send = client[command] as (...a: (number | LuaArg)[]) => Promise<unknown>;
      const reply = await send.call(client, keys.length, ...keys, ...args);
      if (!Array.isArray(reply) || typeof reply[0] !== 'string') {
        throw new Error(`lua/${spec.file}.lua replied without a code: ${String(reply)}`);
      }
      return spec.decode(reply as LuaReply);
    },
  };
  ALL_SCRIPTS.push(script as unknown as LuaScript<string, string, string, string, unknown>);
  return script;
}
