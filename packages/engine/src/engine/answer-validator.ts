import type { TaskWorkerLogger } from '../worker/job-data.js';
import { SchemaValidators } from '../validation/schema-validators.js';
import { ajvMessage } from './ajv-field-error.js';
import type { FieldError } from './outcomes.js';

/**
 * Validates answers against the JSON Schema a handler published in `inputRequest.schema`, as the
 * handler's zod would (formats, patterns in linear time: `SchemaValidators`). Compiled validators
 * are kept by schema text, at most `MAX_COMPILED` of them (handlers reuse a handful of schemas;
 * a stream of distinct questions must not grow the heap).
 */
export class InputValidator {
  static readonly MAX_COMPILED = 256;
  private readonly validators: SchemaValidators;

  constructor(logger?: TaskWorkerLogger) {
    this.validators = new SchemaValidators({ logger, max: InputValidator.MAX_COMPILED });
  }

  /** How many compiled schemas ajv holds (at most `MAX_COMPILED`). */
  get compiledSchemas(): number {
    return this.validators.compiledSchemas;
  }

  /** `[]` when `value` matches `schema`, otherwise one entry per problem. */
  validate(schema: Record<string, unknown>, value: unknown): FieldError[] {
    const { $schema: _ignored, ...rest } = schema;
    const validate = this.validators.get(JSON.stringify(schema), rest, { schema: 'answer' });
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
}
