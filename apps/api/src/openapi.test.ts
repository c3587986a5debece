import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from './openapi.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document is free-form JSON
type Doc = any;

const build = (jobTypes: Parameters<typeof buildOpenApiDocument>[0]['jobTypes']): Doc =>
  buildOpenApiDocument({ maxTtlMs: 3_600_000, jobTypes });

/** A recursive input as zod 4 writes it (under `$defs`), plus a default and a foreign `$ref`. */
const TREE = {
  type: 'object',
  properties: {
    tree: { $ref: '#/$defs/__schema0' },
    depth: { type: 'integer', default: 3, description: 'How deep' },
    elsewhere: { $ref: 'http://127.0.0.1:9/schema.json' },
    default: { type: 'string', enum: ['a'] },
  },
  required: ['tree'],
  additionalProperties: false,
  $defs: {
    __schema0: {
      type: 'object',
      properties: { name: { type: 'string' }, children: { items: { $ref: '#/$defs/__schema0' } } },
      required: ['name'],
    },
  },
};

describe('buildOpenApiDocument', () => {
  it('without registered types, the submit body is the plain envelope, input optional', async () => {
    const doc = build([]);
    const body = doc.components.schemas.CreateJobRequest;
    expect(body.oneOf).toBeUndefined();
    expect(body.required).toEqual(['type']);
    expect(body.properties.input).toMatchObject({ type: 'object' });
    expect(body.properties.input).not.toHaveProperty('default');
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  it('gives a job type with any name, $defs and defaults components a generator can use', async () => {
    const doc = build([{ name: 'tree walk/v2', inputSchema: TREE }]);
    const schemas = doc.components.schemas as Record<string, Doc>;
    const ids = Object.keys(schemas);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9._-]+$/);
    const variant = ids.find((id) => id.startsWith('CreateJobRequest.tree_walk_v2-')) as string;
    const input = ids.find((id) => /^JobInput\.tree_walk_v2-[0-9a-f]{8}$/.test(id)) as string;
    expect(doc.components.schemas.CreateJobRequest.discriminator.mapping).toEqual({
      'tree walk/v2': `#/components/schemas/${variant}`,
    });
    expect(schemas[variant].properties.type).toEqual({ type: 'string', const: 'tree walk/v2' });
    expect(schemas[variant].required).toEqual(['type', 'input']);

    // `$defs` parts become components of their own; local `$ref`s follow them.
    const part = `${input}.defs.__schema0`;
    expect(schemas[input]).not.toHaveProperty('$defs');
    expect(schemas[input].properties.tree).toEqual({ $ref: `#/components/schemas/${part}` });
    expect(schemas[part].properties.children.items).toEqual({
      $ref: `#/components/schemas/${part}`,
    });
    // No pointer to another document; a default is words, not a keyword.
    expect(JSON.stringify(doc)).not.toContain('127.0.0.1:9');
    expect(schemas[input].properties.depth).toEqual({
      type: 'integer',
      description: 'How deep. Default: `3`.',
    });
    // A property named like a keyword is still a property.
    expect(schemas[input].properties.default).toEqual({ type: 'string', enum: ['a'] });

    const bundled = await SwaggerParser.validate(structuredClone(doc));
    expect(bundled).toBeTruthy();
  });

  it('an input schema that accepts `{}` leaves input optional', () => {
    const doc = build([
      { name: 'any', inputSchema: { type: 'object', additionalProperties: {} } },
      { name: 'some', inputSchema: { type: 'object', minProperties: 1 } },
    ]);
    expect(doc.components.schemas['CreateJobRequest.any'].required).toEqual(['type']);
    expect(doc.components.schemas['CreateJobRequest.some'].required).toEqual(['type', 'input']);
  });
});
