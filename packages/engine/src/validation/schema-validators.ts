import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { TaskWorkerLogger } from '../worker/job-data.js';
import { addZodFormats, FORMAT_PATTERNS } from './formats.js';
import { linearRegExp } from './linear-regexp.js';

export interface SchemaValidatorsOptions {
  /** Where ajv's warnings and the patterns left to the worker are reported (JSON log lines). */
  logger?: TaskWorkerLogger | undefined;
  /** How many compiled schemas are kept; the least recently used go past it. */
  max: number;
}

/**
 * The JSON Schemas workers publish (job-type inputs, questions' answers), compiled once and
 * checked as the worker's zod would check them: formats validated (`./formats.ts`), patterns run
 * in linear time (`./linear-regexp.ts`), ajv's warnings in the JSON log with the schema's
 * context. At most `max` compiled schemas are held: an evicted one is removed from ajv too, whose
 * own cache otherwise keeps every schema it ever compiled (8 000 questions: heap 4 → 49 MB).
 * @example validators.get('greet@3f0c', schema, { type: 'greet' })({ name: 'Ada' }) // true
 */
export class SchemaValidators {
  private readonly ajv: Ajv2020;
  /** By key, least recently used first (a Map keeps insertion order). */
  private readonly held = new Map<string, { schema: object; validate: ValidateFunction }>();
  /** Context of the compilation under way, for the log lines ajv writes during it. */
  private context: Record<string, unknown> = {};

  constructor(private readonly opts: SchemaValidatorsOptions) {
    const warn = (msg: string, extra: Record<string, unknown> = {}) =>
      opts.logger?.warn({ ...this.context, ...extra }, msg);
    this.ajv = new Ajv2020({
      allErrors: true,
      strict: false,
      logger: {
        log: (...args: unknown[]) => opts.logger?.info(this.context, args.map(String).join(' ')),
        warn: (...args: unknown[]) => warn(args.map(String).join(' ')),
        error: (...args: unknown[]) => opts.logger?.error(this.context, args.map(String).join(' ')),
      },
      code: {
        regExp: linearRegExp((pattern, reason) => {
          if (FORMAT_PATTERNS.has(pattern)) return; // its format's check stands in
          warn('pattern not checked here (no linear-time engine runs it); the worker checks it', {
            pattern,
            reason,
          });
        }),
      },
    });
    addZodFormats(this.ajv);
  }

  /**
   * The validator of `schema`, compiled on first use under `key` (same key, same schema);
   * `context` goes into the log lines written while compiling it. Throws what ajv throws for a
   * schema it cannot compile.
   */
  get(key: string, schema: object, context: Record<string, unknown> = {}): ValidateFunction {
    const known = this.held.get(key);
    if (known) {
      this.held.delete(key);
      this.held.set(key, known);
      return known.validate;
    }
    this.context = context;
    let validate: ValidateFunction;
    try {
      validate = this.ajv.compile(schema);
    } finally {
      this.context = {};
    }
    this.held.set(key, { schema, validate });
    while (this.held.size > this.opts.max) {
      const [oldest, entry] = this.held.entries().next().value as [
        string,
        { schema: object; validate: ValidateFunction },
      ];
      this.held.delete(oldest);
      this.ajv.removeSchema(entry.schema);
    }
    return validate;
  }

  /** How many compiled schemas ajv itself holds (bounded by `max`). */
  get compiledSchemas(): number {
    return (this.ajv as unknown as { _cache: Map<unknown, unknown> })._cache.size;
  }
}
