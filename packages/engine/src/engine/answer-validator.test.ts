import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { InputValidator } from './answer-validator.js';

/** A question's schema as a handler publishes it (`ctx.requestInput`). */
const question = (i: number) =>
  z.toJSONSchema(z.strictObject({ choice: z.enum([`option-${i}`, 'none']) })) as Record<
    string,
    unknown
  >;

describe('InputValidator', () => {
  it('checks answers against the published schema', () => {
    const v = new InputValidator();
    expect(v.validate(question(1), { choice: 'option-1' })).toEqual([]);
    expect(v.validate(question(1), { choice: 'option-2' })).toMatchObject([
      { path: 'input.choice' },
    ]);
  });

  // Issue 27 item 18: 8 000 distinct questions grew the API's heap from 4 to 49 MB: ajv kept
  // every schema it compiled, whatever the validator's own map forgot.
  it('holds a bounded number of compiled schemas however many distinct questions it sees', () => {
    const v = new InputValidator();
    const metaSchemas = new InputValidator().compiledSchemas; // ajv's own, always there
    for (let i = 0; i < 400; i++) expect(v.validate(question(i), { choice: 'none' })).toEqual([]);
    expect(v.compiledSchemas).toBeGreaterThan(metaSchemas);
    expect(v.compiledSchemas).toBeLessThanOrEqual(InputValidator.MAX_COMPILED + metaSchemas);
    // Still right after evictions, for old and new questions alike.
    expect(v.validate(question(0), { choice: 'option-0' })).toEqual([]);
    expect(v.validate(question(399), { choice: 'option-0' })).toHaveLength(1);
  });
});
