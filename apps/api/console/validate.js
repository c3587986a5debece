// Checks an answer against the question's JSON Schema in the page, before it is sent, with the
// words the API uses (ajv's messages, as the API's answer validator words them): the same
// `{path, message}` pairs a 422 would list, paths from `input`. The API checks again; what it
// says is shown the same way. A `pattern` is left to the API (issue 41, item 9): the browser's
// RegExp backtracks, and a worker's `^(a+)+$` given 34 a's and a '!' froze the tab; the API runs
// patterns in linear time (re2js) and its 422 names the field with the same words.

/** `[]` when `value` matches `schema`, else one `{path, message}` per problem. */
export function validate(schema, value, path = 'input') {
  const errors = [];
  check(schema, value, path, errors);
  return errors;
}

function kind(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

const isType = (type, v) => type === kind(v) || (type === 'number' && kind(v) === 'integer');

/** A value as JSON, cut short past 60 characters (the API's `show`). */
function show(value) {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function equal(a, b) {
  return JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
}

function sorted(v) {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sorted(v[k])]),
    );
  return v;
}

function check(s, v, path, errors) {
  if (s === true || s === undefined || s === null || typeof s !== 'object') return;
  const add = (message, at = path) => errors.push({ path: at, message });
  const types = s.type === undefined ? null : [].concat(s.type);
  const typed = !types || types.some((t) => isType(t, v));
  if (!typed) add(`must be ${types.join(',')}`);
  if (Array.isArray(s.enum) && !s.enum.some((e) => equal(e, v))) {
    add(`must be one of ${s.enum.map(show).join(', ')}`);
  }
  if ('const' in s && !equal(s.const, v)) add(`must be ${show(s.const)}`);
  if (!typed) return;
  if (typeof v === 'number') numberRules(s, v, add);
  if (typeof v === 'string') stringRules(s, v, add);
  if (Array.isArray(v)) arrayRules(s, v, path, errors, add);
  else if (v && typeof v === 'object') objectRules(s, v, path, errors, add);
  for (const key of ['anyOf', 'oneOf']) {
    if (!Array.isArray(s[key])) continue;
    const passing = s[key].filter((option) => validate(option, v, path).length === 0).length;
    if (passing === 0)
      add(`must match ${key === 'anyOf' ? 'a schema in anyOf' : 'exactly one schema in oneOf'}`);
    else if (key === 'oneOf' && passing > 1) add('must match "oneOf" schema');
  }
  if (Array.isArray(s.allOf)) for (const part of s.allOf) check(part, v, path, errors);
}

function numberRules(s, v, add) {
  if (typeof s.maximum === 'number' && v > s.maximum) add(`must be <= ${s.maximum}`);
  if (typeof s.minimum === 'number' && v < s.minimum) add(`must be >= ${s.minimum}`);
  if (typeof s.exclusiveMaximum === 'number' && v >= s.exclusiveMaximum)
    add(`must be < ${s.exclusiveMaximum}`);
  if (typeof s.exclusiveMinimum === 'number' && v <= s.exclusiveMinimum)
    add(`must be > ${s.exclusiveMinimum}`);
  if (typeof s.multipleOf === 'number' && !Number.isInteger(v / s.multipleOf))
    add(`must be multiple of ${s.multipleOf}`);
}

function stringRules(s, v, add) {
  const length = [...v].length;
  if (typeof s.maxLength === 'number' && length > s.maxLength)
    add(`must NOT have more than ${s.maxLength} characters`);
  if (typeof s.minLength === 'number' && length < s.minLength)
    add(`must NOT have fewer than ${s.minLength} characters`);
  if (typeof s.format === 'string' && FORMATS[s.format] && !FORMATS[s.format](v)) {
    add(`must match format "${s.format}"`);
  }
}

function arrayRules(s, v, path, errors, add) {
  if (typeof s.maxItems === 'number' && v.length > s.maxItems)
    add(`must NOT have more than ${s.maxItems} items`);
  if (typeof s.minItems === 'number' && v.length < s.minItems)
    add(`must NOT have fewer than ${s.minItems} items`);
  if (s.items && typeof s.items === 'object')
    v.forEach((item, i) => check(s.items, item, `${path}.${i}`, errors));
}

function objectRules(s, v, path, errors, add) {
  for (const name of Array.isArray(s.required) ? s.required : []) {
    if (!(name in v)) add(`must have required property '${name}'`);
  }
  const properties = s.properties ?? {};
  if (s.additionalProperties === false) {
    for (const name of Object.keys(v)) {
      if (!(name in properties)) add('must NOT have additional properties', `${path}.${name}`);
    }
  }
  for (const [name, sub] of Object.entries(properties)) {
    if (name in v) check(sub, v[name], `${path}.${name}`, errors);
  }
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const validDate = (v) => {
  const m = DATE.exec(v);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3];
};

/**
 * The formats the page can judge as the API does (engine's validation/formats.ts); others are
 * left to the API. An email asks only for the `@` every zod email pattern has (the pattern beside
 * it says the rest).
 */
const FORMATS = {
  email: (v) => /^[^@]*[^@]@.+$/s.test(v),
  date: validDate,
  'date-time': (v) =>
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(v) &&
    validDate(v.slice(0, 10)) &&
    !Number.isNaN(Date.parse(v)),
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
  uri: (v) => {
    try {
      return Boolean(new URL(v));
    } catch {
      return false;
    }
  },
};
