import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { ajvMessage } from './ajv-field-error.js';
import type { FieldError } from './outcomes.js';

/**
 * Validates answers against the JSON Schema a handler published in `inputRequest.schema`.
 * Compiled validators are cached by schema text (handlers reuse a handful of schemas).
 */
export class InputValidator {
  private readonly ajv = new Ajv2020({ allErrors: true, strict: false });
  private readonly cache = new Map<string, ValidateFunction>();

  /** `[]` when `value` matches `schema`, otherwise one entry per problem. */
  validate(schema: Record<string, unknown>, value: unknown): FieldError[] {
    const validate = this.compiled(schema);
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => {
      const extra =
        e.keyword === 'additionalProperties'
          ? `/${String((e.params as { additionalProperty?: string }).additionalProperty)}`
          : '';
      const path = `input${`${e.instancePath}${extra}`.replaceAll('/', '.')}`;
      return { path, message: ajvMessage(e) };
    });
  }

  private compiled(schema: Record<string, unknown>): ValidateFunction {
    const text = JSON.stringify(schema);
    let validate = this.cache.get(text);
    if (!validate) {
      if (this.cache.size >= 256) this.cache.clear();
      const { $schema: _ignored, ...rest } = schema;
      validate = this.ajv.compile(rest);
      this.cache.set(text, validate);
    }
    return validate;
  }
}
