import type { Ajv } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { z } from 'zod';

// ajv-formats is CommonJS (`module.exports = plugin`): under NodeNext its default import is the
// plugin itself, though its types describe a namespace.
const addFormats = addFormatsPlugin as unknown as typeof addFormatsPlugin.default;

/** The test of one string, as ajv's `addFormat` takes it. */
const rule =
  (schema: z.ZodType) =>
  (s: string): boolean =>
    schema.safeParse(s).success;

/**
 * Formats whose check here is zod's own, because ajv-formats' is stricter than what the worker's
 * zod accepts (the API must never refuse input the worker would run), or because the pattern zod
 * publishes beside the format needs lookarounds the linear-time engine does not run.
 * `tests/input-validation.test.ts` compares both ways on a corpus.
 */
const ZOD_RULES: Record<string, z.ZodType> = {
  // zod: WHATWG URL parsing of the trimmed string (`a b` in a path, IDN hosts, `|`, `{}`…);
  // ajv-formats: RFC 3986 ASCII only.
  uri: z.url(),
  // zod takes fractional seconds (`PT1.5S`); ajv-formats does not.
  duration: z.union([z.iso.duration(), z.string().regex(z.regexes.extendedDuration)]),
  hostname: z.hostname(),
  emoji: z.emoji(),
  // Published without a pattern.
  jwt: z.jwt(),
};

/**
 * Formats only zod emits, each published with the pattern that is zod's whole rule for it (the
 * pattern keyword checks it): known here so that ajv does not warn, and not checked twice.
 */
const PATTERN_CARRIED = [
  'nanoid',
  'cuid',
  'cuid2',
  'ulid',
  'xid',
  'ksuid',
  'mac',
  'cidrv4',
  'cidrv6',
  'base64',
  'base64url',
  'e164',
  'hex',
  'lowercase',
  'uppercase',
  'starts_with',
  'ends_with',
  'includes',
  ...['md5', 'sha1', 'sha256', 'sha384', 'sha512'].flatMap((alg) =>
    ['hex', 'base64', 'base64url'].map((enc) => `${alg}_${enc}`),
  ),
];

/**
 * The patterns zod publishes with the formats of `ZOD_RULES`: the format's check stands in for
 * them, so the linear-time engine not running them is nothing to report.
 */
export const FORMAT_PATTERNS: ReadonlySet<string> = new Set([
  z.regexes.hostname.source,
  z.regexes.duration.source,
  z.regexes.extendedDuration.source,
  z.regexes.emoji().source,
]);

/**
 * Teaches `ajv` the JSON Schema formats (ajv-formats, full mode) and the ones zod emits, each
 * judged as the worker's zod judges it: `format: uri` from `z.url()` refuses `"not a url"` at
 * the API, and accepts every URL zod accepts.
 * @example addZodFormats(new Ajv2020({ strict: false }))
 */
export function addZodFormats(ajv: Ajv): void {
  addFormats(ajv);
  for (const [name, schema] of Object.entries(ZOD_RULES)) {
    ajv.addFormat(name, { type: 'string', validate: rule(schema) });
  }
  // Every zod email is published with its exact pattern (default, html5, rfc5322, unicode or a
  // custom one): the format asks only for the `@` all of them have, never more than zod.
  ajv.addFormat('email', { type: 'string', validate: (s) => /^[^@]*[^@]@.+$/s.test(s) });
  for (const name of PATTERN_CARRIED) ajv.addFormat(name, true);
}
