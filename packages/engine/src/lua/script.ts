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
 * `item_keys(i)` / `item_args(i)` giving item i's by name (`item_keys(i, t)` fills the table `t`
 * instead of making one: a loop over many items can reuse one table per item, issue 28).
 */
function prologue(spec: ScriptSpec<string, string, string, string, unknown>): string {
  const table = (names: readonly string[], from: string, base: string) =>
    `{${names.map((n, i) => `${n} = ${from}[${base}${i + 1}]`).join(', ')}}`;
  const fill = (names: readonly string[], from: string, base: string) =>
    names.map((n, i) => `t.${n} = ${from}[${base}${i + 1}]`).join(' ');
  const item = (name: string, names: readonly string[], from: string, first: number) =>
    `local function ${name}(i, t) local b = ${first} + (i - 1) * ${names.length} ` +
    `if not t then return ${table(names, from, 'b + ')} end ${fill(names, from, 'b + ')} return t end`;
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
      item('item_keys', itemKeys, 'KEYS', nk),
      item('item_args', itemArgs, 'ARGV', na),
    );
    if (spec.restKeys) {
      lines.push(
        `local function rest_key(j) return KEYS[${nk} + ITEMS * ${itemKeys.length} + j] end`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Appends `from[name]` for each name, in order, to a list. */
type Encoder = (from: Readonly<Record<string, LuaArg>>, into: LuaArg[]) => void;

/**
 * An encoder for a fixed list of names, compiled once per script: the names become constant
 * property reads (`o["task"]`), which V8 optimizes as it does `o.task`, instead of a loop of
 * lookups by a variable name; a create sends 20-odd values per task (issue 28's bench).
 * The names are the script's own declared identifiers (`parseHeader` checks them), never input.
 */
function encoder(names: readonly string[]): Encoder {
  for (const name of names) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a Lua name: ${name}`);
  }
  const body = names.map((name) => `into.push(from[${JSON.stringify(name)}]);`).join('\n');
  return new Function('from', 'into', body) as Encoder;
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
  const encode = {
    keys: encoder(spec.keys),
    args: encoder(spec.args),
    itemKeys: encoder(spec.itemKeys ?? []),
    itemArgs: encoder(spec.itemArgs ?? []),
  };
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
      // One flat list, the number of keys first: [n, ...keys, ...args] (ioredis flattens it).
      const keys: LuaArg[] = [0];
      const args: LuaArg[] = [];
      encode.keys(call.keys, keys);
      encode.args(call.args, args);
      for (const item of call.items ?? []) {
        encode.itemKeys(item.keys, keys);
        encode.itemArgs(item.args, args);
      }
      if (call.restKeys) for (const key of call.restKeys) keys.push(key);
      keys[0] = keys.length - 1;
      for (const arg of args) keys.push(arg);
      const send = client[command] as (list: LuaArg[]) => Promise<unknown>;
      const reply = await send.call(client, keys);
      if (!Array.isArray(reply) || typeof reply[0] !== 'string') {
        throw new Error(`lua/${spec.file}.lua replied without a code: ${String(reply)}`);
      }
      return spec.decode(reply as LuaReply);
    },
  };
  ALL_SCRIPTS.push(script as unknown as LuaScript<string, string, string, string, unknown>);
  return script;
}
