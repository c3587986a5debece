import type { RegExpEngine, RegExpLike } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';

/**
 * An ajv regular-expression engine (`code: { regExp }`) that runs a schema's `pattern` in linear
 * time (RE2's automaton, pure JavaScript: `re2js`), so that a worker's backtracking regex
 * (`^(a+)+$`) costs the API microseconds, not hours, on a hostile input (issue 27, item 17).
 *
 * A pattern RE2 cannot run (backreferences, lookarounds) is never run here with a backtracking
 * engine instead: it matches everything, `unsupported(pattern, reason)` is told, and the worker's
 * own zod schema, which is the authority, judges that field (decision 45).
 * @example new Ajv2020({ code: { regExp: linearRegExp((p) => log.warn({ pattern: p })) } })
 */
export function linearRegExp(unsupported: (pattern: string, reason: string) => void): RegExpEngine {
  const engine = (pattern: string, _flags: string): RegExpLike => {
    try {
      const re = RE2JS.compile(RE2JS.translateRegExp(pattern));
      return keyed({ test: (s: string) => re.test(s) }, `/${pattern}/ (re2js)`);
    } catch (err) {
      unsupported(pattern, err instanceof Error ? err.message : String(err));
      return keyed({ test: () => true }, `/${pattern}/ (left to the worker)`);
    }
  };
  // ajv's standalone code would call this expression; longrun never generates standalone code.
  return Object.assign(engine, { code: 'require("re2js").RE2JS' });
}

/** ajv keys compiled patterns by `toString()`: each needs its own, or they share one. */
function keyed(like: RegExpLike, key: string): RegExpLike {
  return Object.assign(like, { toString: () => key });
}
