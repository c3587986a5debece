import { describe, expect, it } from 'vitest';
import { InputValidator } from './answer-validator.js';

describe('ajv errors as field errors', () => {
  const validator = new InputValidator();

  it('names the allowed values of an enum or a constant (issue 27)', () => {
    const schema = {
      type: 'object',
      properties: {
        decision: { type: 'string', enum: ['approve', 'reject', 'defer'] },
        version: { const: 2 },
      },
    };
    const errors = validator.validate(schema, { decision: 'maybe', version: 3 });
    expect(errors).toContainEqual({
      path: 'input.decision',
      message: 'must be one of "approve", "reject", "defer"',
    });
    expect(errors).toContainEqual({ path: 'input.version', message: 'must be 2' });
  });

  it('leaves other messages as ajv words them', () => {
    const errors = validator.validate(
      { type: 'object', properties: { n: { type: 'integer' } } },
      { n: 'x' },
    );
    expect(errors).toEqual([{ path: 'input.n', message: 'must be integer' }]);
  });
});
