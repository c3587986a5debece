import { z } from 'zod';

/** A JSON Schema or OpenAPI object, as plain JSON. */
export type Json = Record<string, unknown>;

/**
 * A reference to a component of the document.
 * @example ref('schemas', 'TaskHandle') // {$ref: '#/components/schemas/TaskHandle'}
 */
export function ref(kind: string, name: string): Json {
  return { $ref: `#/components/${kind}/${name}` };
}

/** Converts one zod schema to a JSON Schema fit to embed in the document. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  return embeddable(
    z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }),
  );
}

/**
 * One query parameter per property of a strict zod query schema (the one the route parses the
 * query with).
 * @example queryParameters(resultQuerySchema) // [{name: 'wait', in: 'query', …}]
 */
export function queryParameters(schema: z.ZodObject): Json[] {
  const object = jsonSchema(schema, 'input') as {
    properties?: Record<string, Json>;
    required?: string[];
  };
  return Object.entries(object.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: object.required?.includes(name) ?? false,
    schema: property,
  }));
}

/**
 * Converts named zod schemas to `components.schemas`; a schema used inside another becomes a
 * `$ref` to its component instead of a copy.
 * @example componentSchemas('output', { TaskHandle: taskHandleSchema })
 */
export function componentSchemas(io: 'input' | 'output', named: Record<string, z.ZodType>): Json {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  });
  return Object.fromEntries(Object.entries(schemas).map(([id, s]) => [id, embeddable(s)]));
}

/** Drops `$schema` and `$id`: the document's dialect applies, and components are found by path. */
export function embeddable(schema: object): Json {
  const { $schema: _dialect, $id: _id, ...rest } = schema as Json;
  return rest;
}
