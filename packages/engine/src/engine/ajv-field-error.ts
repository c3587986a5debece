import type { ErrorObject } from 'ajv/dist/2020.js';

/**
 * An ajv error's message, with the allowed values named where ajv only says there are some: an
 * `enum` ("must be equal to one of the allowed values") says which, a `const` which one, so a
 * caller can fix the field without reading the schema.
 * @example ajvMessage({ keyword: 'enum', params: { allowedValues: ['a', 'b'] }, … }) // 'must be one of "a", "b"'
 */
export function ajvMessage(error: ErrorObject): string {
  const params = error.params as { allowedValues?: unknown; allowedValue?: unknown };
  if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    return `must be one of ${params.allowedValues.map(show).join(', ')}`;
  }
  if (error.keyword === 'const' && 'allowedValue' in params) {
    return `must be ${show(params.allowedValue)}`;
  }
  return error.message ?? 'is invalid';
}

/** A value as JSON, cut short past 60 characters (an enum of objects stays readable). */
function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}
