// The console checks an answer in the page before sending it (apps/api/console/validate.js), and
// must say what the API would (issue 30: "validated in the page with the same messages the API
// gives"). Each case runs both: the page's module, imported here as the browser loads it, and the
// engine's InputValidator, which answers POST /v1/jobs/{id}/input; their {path, message} pairs
// must be the same, but for a `pattern`: the page leaves it to the API (issue 41, item 9: the
// browser's RegExp backtracks, the API's re2js does not), whose 422 the page shows as it is.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { beforeAll, describe, expect, it } from 'vitest';
import { InputValidator } from '@longrun/engine/internal';

type FieldError = { path: string; message: string };
let pageValidate: (schema: unknown, value: unknown) => FieldError[];
const api = new InputValidator();

beforeAll(async () => {
  const file = resolve(import.meta.dirname, '../apps/api/console/validate.js');
  ({ validate: pageValidate } = (await import(pathToFileURL(file).href)) as {
    validate: typeof pageValidate;
  });
});

const schema = (zod: z.ZodType) => z.toJSONSchema(zod) as Record<string, unknown>;
const sorted = (errors: FieldError[]) =>
  [...errors].sort((a, b) => `${a.path} ${a.message}`.localeCompare(`${b.path} ${b.message}`));

const review = schema(
  z.strictObject({
    approved: z.boolean(),
    amount: z.number().int().min(1).max(1000),
    ratio: z.number().gt(0).lt(1).optional(),
    step: z.number().multipleOf(5).optional(),
    reviewer: z.email(),
    name: z.string().min(2).max(5).optional(),
    code: z
      .string()
      .regex(/^[A-Z]{3}$/)
      .optional(),
    when: z.iso.date().optional(),
    at: z.iso.datetime().optional(),
    id: z.uuid().optional(),
    decision: z.enum(['ship', 'hold']),
    level: z.literal('final').optional(),
    address: z.strictObject({ city: z.string().min(1), zip: z.string().max(5).optional() }),
    notes: z.array(z.string().max(3)).min(1).max(2).optional(),
  }),
);
const good = {
  approved: true,
  amount: 10,
  reviewer: 'ana@example.com',
  decision: 'ship',
  address: { city: 'Oslo' },
};

const cases: [string, Record<string, unknown>, unknown][] = [
  ['a good answer', review, good],
  ['a number over its maximum', review, { ...good, amount: 5000 }],
  ['a number under its minimum', review, { ...good, amount: 0 }],
  ['a fraction for a whole number', review, { ...good, amount: 2.5 }],
  ['text for a number', review, { ...good, amount: 'ten' }],
  ['exclusive bounds', review, { ...good, ratio: 1 }],
  ['exclusive bounds, low', review, { ...good, ratio: 0 }],
  ['a multiple', review, { ...good, step: 7 }],
  ['a string too short', review, { ...good, name: 'a' }],
  ['a string too long', review, { ...good, name: 'abcdefgh' }],
  ['a pattern', review, { ...good, code: 'abc' }],
  ['an email', review, { ...good, reviewer: 'not an email' }],
  ['a date', review, { ...good, when: '2026-02-30' }],
  ['a date-time', review, { ...good, at: 'yesterday' }],
  ['a uuid', review, { ...good, id: 'nope' }],
  ['an enum', review, { ...good, decision: 'maybe' }],
  ['a const', review, { ...good, level: 'draft' }],
  ['a boolean', review, { ...good, approved: 'yes' }],
  ['missing fields', review, { approved: true }],
  ['a nested object', review, { ...good, address: { zip: '1234567' } }],
  ['an unknown field', review, { ...good, extra: 1 }],
  ['a nested unknown field', review, { ...good, address: { city: 'x', street: 'y' } }],
  ['too many items', review, { ...good, notes: ['a', 'b', 'c'] }],
  ['too few items', review, { ...good, notes: [] }],
  ['a bad item', review, { ...good, notes: ['abcd'] }],
  ['not an object', review, 'yes'],
  ['null', review, null],
  ['a list for an object', review, [1]],
];

/** What the page says of an answer: what the API says, less the patterns it leaves to the API. */
const pageWouldSay = (errors: FieldError[]) =>
  errors.filter((e) => !e.message.startsWith('must match pattern'));

describe("the console's answer check says what the API says", () => {
  it.each(cases)('%s', (_what, question, answer) => {
    const expected = pageWouldSay(api.validate(question, answer));
    expect(sorted(pageValidate(question, answer))).toEqual(sorted(expected));
  });

  it('never runs a pattern: the API judges it, in linear time (issue 41, item 9)', () => {
    // A pattern the page ran would refuse 'abc' here, before the API could; a backtracking one
    // (^(a+)+$ against 34 a's and a '!') froze the tab. Only the API says it.
    const question = schema(z.strictObject({ code: z.string().regex(/^[A-Z]{3}$/) }));
    expect(pageValidate(question, { code: 'abc' })).toEqual([]);
    expect(api.validate(question, { code: 'abc' })).toEqual([
      { path: 'input.code', message: 'must match pattern "^[A-Z]{3}$"' },
    ]);
    const hostile = { type: 'string', pattern: '^(a+)+$' };
    expect(pageValidate(hostile, `${'a'.repeat(34)}!`)).toEqual([]);
    expect(api.validate(hostile, `${'a'.repeat(34)}!`)).toEqual([
      { path: 'input', message: 'must match pattern "^(a+)+$"' },
    ]);
  });

  it('has something to say for every bad answer above (the cases are not all passes)', () => {
    const refused = cases.filter(([, q, a]) => api.validate(q, a).length > 0);
    expect(refused).toHaveLength(cases.length - 1);
  });
});
