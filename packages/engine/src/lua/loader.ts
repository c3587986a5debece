import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Reads longrun's Lua scripts from `packages/engine/lua/` (one command per file, shared code in
 * `lua/includes/`, BullMQ's `commands/*.lua` being the model) and resolves their includes.
 *
 * A line `--- @include "includes/events"` is replaced by that file (each include once per
 * script, so two includes may share a third). Includes whose text is built at start-up instead of
 * read from a file (the constants generated from core, BullMQ's own add scripts) are registered
 * by name with `provideInclude` before the first script that names them is loaded.
 *
 * The directory sits beside `src/` and `dist/` alike, so the same relative path serves the
 * sources under vitest, the compiled package, the Docker image and the published tarball.
 */
export const LUA_DIR = fileURLToPath(new URL('../../lua/', import.meta.url));

const INCLUDE = /^[ \t]*---[ \t]*@include[ \t]+"([^"]+)"[ \t]*$/gm;

const provided = new Map<string, () => string>();

/**
 * Registers an include built in TypeScript (`--- @include "<name>"` then expands to `text()`).
 * @example provideInclude('generated/core', coreConstantsLua)
 */
export function provideInclude(name: string, text: () => string): void {
  provided.set(name, text);
}

function readInclude(name: string): string {
  const build = provided.get(name);
  if (build) return build();
  return readFileSync(`${LUA_DIR}${name}.lua`, 'utf8');
}

/**
 * The script `lua/<name>.lua` with its includes expanded (recursively, each once).
 * @example loadLua('announce-shards')
 */
export function loadLua(name: string): string {
  return expandIncludes(readFileSync(`${LUA_DIR}${name}.lua`, 'utf8'), name);
}

/** `text` (read from `lua/<from>.lua`) with its `@include` lines expanded, each include once. */
export function expandIncludes(text: string, from: string): string {
  const seen = new Set<string>();
  const expand = (body: string, file: string): string =>
    body.replace(INCLUDE, (_line, include: string) => {
      if (seen.has(include)) return `-- (${include}: included above)`;
      seen.add(include);
      let included: string;
      try {
        included = readInclude(include);
      } catch (err) {
        throw new Error(`lua/${file}.lua includes "${include}", which was not found`, {
          cause: err,
        });
      }
      return `-- ${include}\n${expand(included, include)}`;
    });
  return expand(text, from);
}

/** The names (without `.lua`) a script file's header lists, in order: see `parseHeader`. */
export interface ScriptHeader {
  keys: string[];
  args: string[];
  itemKeys: string[];
  itemArgs: string[];
}

const HEADER_LINE = /^\s*(ITEM\.)?(KEYS|ARGV)\[(\d+)\]\s+([A-Za-z_][A-Za-z0-9_]*)/;

/**
 * The KEYS and ARGV a script's header comment names (`KEYS[1] task  the task's record`, and for
 * scripts over a batch `ITEM.KEYS[1] task` for the keys repeated per item). Tests compare it
 * with the wrapper's declaration, so the two sides cannot drift.
 */
export function parseHeader(source: string): ScriptHeader {
  const end = source.indexOf(']]');
  const header = end > 0 ? source.slice(0, end) : '';
  const out: ScriptHeader = { keys: [], args: [], itemKeys: [], itemArgs: [] };
  for (const line of header.split('\n')) {
    const m = HEADER_LINE.exec(line);
    if (!m) continue;
    const list =
      m[2] === 'KEYS' ? (m[1] ? out.itemKeys : out.keys) : m[1] ? out.itemArgs : out.args;
    if (Number(m[3]) !== list.length + 1) {
      throw new Error(`header lists ${m[1] ?? ''}${m[2]}[${m[3]}] out of order`);
    }
    list.push(m[4] as string);
  }
  return out;
}
