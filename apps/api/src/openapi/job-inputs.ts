import { createHash } from 'node:crypto';
import { embeddable, ref, type Json } from './json-schema.js';

/** A job type as the document publishes it: its name and registered input schema. */
export interface DocumentedJobType {
  name: string;
  version?: string;
  inputSchema: Record<string, unknown>;
}

/**
 * `CreateJobRequest` as a union keyed on `type`: one variant per registered job type, whose
 * `type` is that name and whose `input` is that type's `JobInput.<type>` schema, so a client
 * generated from the document checks each input when it compiles. `input` carries no `default`
 * (generators read a default as "always present"): the API reads a missing `input` as `{}`, so it
 * is optional, and required only where `{}` can never pass the type's schema (that submit is
 * `422` either way). While no type is registered, the plain envelope.
 */
export function createJobRequests(envelope: Json, registered: readonly DocumentedJobType[]): Json {
  const properties = envelope.properties as Record<string, Json>;
  const { default: _readAsMissing, ...anyInput } = properties.input ?? {};
  const plain = { ...envelope, properties: { ...properties, input: anyInput } };
  if (registered.length === 0) return { CreateJobRequest: plain };

  const variants = registered.map((job) => ({
    name: job.name,
    id: `CreateJobRequest.${componentKey(job.name)}`,
    schema: {
      ...plain,
      properties: {
        ...plain.properties,
        type: { type: 'string', const: job.name },
        input: ref('schemas', jobInputId(job.name)),
      },
      required: refusesEmptyObject(job.inputSchema) ? ['type', 'input'] : ['type'],
    },
  }));
  return {
    CreateJobRequest: {
      description:
        'The submit body: one variant per job type registered when this document was served, told apart by `type`.',
      oneOf: variants.map(({ id }) => ref('schemas', id)),
      discriminator: {
        propertyName: 'type',
        mapping: Object.fromEntries(
          variants.map(({ name, id }) => [name, `#/components/schemas/${id}`]),
        ),
      },
    },
    ...Object.fromEntries(variants.map(({ id, schema }) => [id, schema])),
  };
}

/** A request whose `input` defaults to `{}`, without the `default` (generators read it as "always there"). */
export function withoutInputDefault(schema: Json): Json {
  const properties = schema.properties as Record<string, Json>;
  const { default: _readAsMissing, ...input } = properties.input ?? {};
  return { ...schema, properties: { ...properties, input } };
}

/** Whether `{}` (what the API reads a missing `input` as) can never match this input schema. */
function refusesEmptyObject(schema: Json): boolean {
  const { type, required, minProperties } = schema;
  if (Array.isArray(required) && required.length > 0) return true;
  if (typeof minProperties === 'number' && minProperties > 0) return true;
  if (typeof type === 'string') return type !== 'object';
  if (Array.isArray(type)) return !type.includes('object');
  return false;
}

/** The component that holds a job type's input schema. */
function jobInputId(name: string): string {
  return `JobInput.${componentKey(name)}`;
}

/**
 * Component names may hold `A-Z a-z 0-9 . _ -` only. A job type named with anything else (the
 * registry allows any name) gets the name with those characters replaced plus a hash of it, so
 * two such names never share a component.
 */
function componentKey(name: string): string {
  if (/^[A-Za-z0-9._-]+$/.test(name)) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.replace(/[^A-Za-z0-9._-]/g, '_')}-${hash}`;
}

/** Keywords whose values are data, not schemas: a `$ref` in them is not a reference. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'examples', 'example']);
/** Keywords whose values map names (which may be `default`, `$ref`, …) to schemas. */
const NAMED_SCHEMAS = new Set([
  'properties',
  'patternProperties',
  'dependentSchemas',
  '$defs',
  'definitions',
]);

const isObject = (node: unknown): node is Json =>
  node !== null && typeof node === 'object' && !Array.isArray(node);

/**
 * A registered input schema as components: `JobInput.<type>`, and one `JobInput.<type>.defs.<name>`
 * per part under its `$defs` (zod writes recursive and shared parts there). The schema was a
 * document of its own, so its `$ref`s point into it: they are pointed at those components (a
 * generator then names each part, instead of reading `$defs` as a property of the input). A
 * `$ref` to another document is dropped (that part reads as any value), so that no tool reading
 * this document is sent to fetch a URL a worker registered. A `default` becomes words in the
 * `description`: generators read a default as "always present", and the client may leave it out.
 */
export function jobInputSchemas(job: DocumentedJobType): [string, Json][] {
  const id = jobInputId(job.name);
  const { $defs, definitions, ...root } = embeddable(job.inputSchema);
  const parts: Json = {
    ...(isObject(definitions) ? definitions : {}),
    ...(isObject($defs) ? $defs : {}),
  };
  const partId = (name: string) => `${id}.defs.${componentKey(name)}`;
  const target = (pointer: string): string | undefined => {
    const part = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(pointer)?.[1];
    const name = part === undefined ? undefined : unescapePointer(part);
    if (name !== undefined && Object.hasOwn(parts, name)) {
      return `#/components/schemas/${partId(name)}`;
    }
    if (pointer === '#' || pointer.startsWith('#/'))
      return `#/components/schemas/${id}${pointer.slice(1)}`;
    return undefined;
  };
  return [
    [id, relinked(root, target)],
    ...Object.entries(parts).map(([name, part]): [string, Json] => [
      partId(name),
      relinked(part, target),
    ]),
  ];
}

/** A JSON pointer segment of a URI fragment, as the name it stands for. */
function unescapePointer(segment: string): string {
  let decoded = segment;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    // Not percent-encoded after all: take it as written.
  }
  return decoded.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** `schema` with each `$ref` replaced by `target($ref)` (dropped when undefined), defaults worded. */
function relinked(schema: unknown, target: (ref: string) => string | undefined): Json {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isObject(node)) return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const to = target(value);
        if (to !== undefined) out[key] = to;
      } else if (key === 'default') {
        continue;
      } else if (DATA_KEYWORDS.has(key)) {
        out[key] = value;
      } else if (NAMED_SCHEMAS.has(key) && isObject(value)) {
        out[key] = Object.fromEntries(Object.entries(value).map(([n, v]) => [n, walk(v)]));
      } else {
        out[key] = walk(value);
      }
    }
    if ('default' in node) {
      const said = `Default: \`${JSON.stringify(node.default)}\`.`;
      const { description } = out;
      out.description =
        typeof description === 'string' && description.trim() !== ''
          ? `${description.replace(/[\s.]*$/, '.')} ${said}`
          : said;
    }
    return out;
  };
  return isObject(schema) ? (walk(schema) as Json) : {};
}
