import { DurableTaskError } from '@longrun/core';

/** The last time a JavaScript `Date` can hold (ms since the epoch): no task expires after it. */
const MAX_DATE_MS = 8.64e15;

/**
 * When a sleep asked to end at `wanted` (ms since the epoch) ends, as recorded: an end that has
 * passed (`ctx.sleep(0)`, a negative sleep however large, a date in the past) is now, so the
 * sleep ends at once and its record holds a real date. A sleep with no end (`NaN`, an invalid
 * `Date`) or past any date (`ctx.sleep(1e300)`, `Infinity`) throws a fatal `DurableTaskError`:
 * every retry would ask the same (decision 72). A later end still has to come before the task's
 * expiry, checked where the sleep is first recorded (`sleep-past-expiry`).
 * @example sleepEnd(Date.now() - 5) // Date.now()
 */
export function sleepEnd(wanted: number): number {
  if (Number.isNaN(wanted)) {
    throw new DurableTaskError(
      'sleep-invalid',
      'ctx.sleep needs a number of milliseconds, and ctx.sleepUntil a valid date or epoch milliseconds',
    );
  }
  if (wanted > MAX_DATE_MS) {
    throw new DurableTaskError(
      'sleep-past-expiry',
      `The sleep would end past the last date there is (${wanted} ms since the epoch), after the task expires`,
    );
  }
  return Math.max(wanted, Date.now());
}

/**
 * `JSON.stringify`'s replacer for a step's result: throws on a value that JSON would not give back
 * as it is (decision 72), where JSON itself would drop it or turn it into `{}` or `null` without a
 * word (a `Map`, a `Set`, a class instance, a function, a symbol, `NaN`, `undefined` in an array)
 * or throw (a `bigint`). JSON calls it after `toJSON` (a `Date` is its ISO string here) for every
 * value, with its property name or index as `key` ('' for the result itself) and its holder as
 * `this`. An `undefined` property is left out, as JSON does (an optional field).
 * @example JSON.stringify({ at: new Date(0) }, jsonOnly) // '{"at":"1970-01-01T00:00:00.000Z"}'
 */
export function jsonOnly(this: unknown, key: string, value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Number.isFinite(value)) return value;
      throw notJson(key, String(value));
    case 'undefined':
      if (Array.isArray(this)) throw notJson(key, 'undefined in an array');
      return value;
    case 'object': {
      if (value === null || Array.isArray(value)) return value;
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === null) return value;
      const name = (value as { constructor?: { name?: string } }).constructor?.name || 'class';
      throw notJson(key, `a ${name} (not a plain object, and no toJSON)`);
    }
    default:
      throw notJson(key, `a ${typeof value}`);
  }
}

function notJson(key: string, what: string): Error {
  return new TypeError(`${what}${key === '' ? '' : ` at "${key}"`} does not come back from JSON`);
}

/** A step result as JSON, unless it is not JSON or over the size cap. */
export function encodeStepResult(name: string, value: unknown, max: number): string {
  let json: string;
  try {
    json = JSON.stringify(value ?? null, jsonOnly) ?? 'null';
  } catch (error) {
    throw new DurableTaskError(
      'step-result-not-json',
      `The result of step "${name}" is not JSON: ${(error as Error).message}`,
    );
  }
  if (max > 0 && json.length * 3 > max) {
    const bytes = Buffer.byteLength(json);
    if (bytes > max) {
      throw new DurableTaskError(
        'step-result-too-large',
        `The result of step "${name}" is ${bytes} bytes of JSON, over the ${max}-byte limit (LONGRUN_MAX_RESULT_BYTES)`,
      );
    }
  }
  return json;
}
