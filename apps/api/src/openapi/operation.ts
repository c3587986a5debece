import type { ErrorRequestHandler, IRouter, IRouterMatcher, RequestHandler } from 'express';
import type { z } from 'zod';
import { queryParameters, ref, type Json } from './json-schema.js';

/** What some descriptions say that is only known when the document is built. */
export interface DocumentContext {
  /** The registered job types, as words (`` `echo`, `sleep` `` or "none registered yet"). */
  jobTypes: string;
  /** The shortest schedule period the API takes, in ms. */
  minEveryMs: number;
}

/**
 * One operation of the API, declared once: the route registers its handlers with it (`mount`)
 * and the OpenAPI document describes it (`pathItems`), so the two cannot name different methods
 * or paths. Parameters, bodies and responses are the document's own objects, mostly `$ref`s to
 * components generated from the zod schemas the routes validate with.
 */
export interface Operation {
  method: 'get' | 'post' | 'put' | 'delete';
  /** The OpenAPI path template (`/v1/jobs/{id}`). */
  path: string;
  /**
   * The Express path, when not the template's own (`/v1/jobs/` matches `/v1/jobs` and
   * `/v1/jobs/`, and keeps the metrics' `route` label).
   */
  route?: string;
  operationId: string;
  summary: string;
  description?: string | ((context: DocumentContext) => string);
  tags?: string[];
  /** `[]`: no key needed. Absent: the document's default, a bearer key. */
  security?: [];
  /** Parameters in the path; every operation of one path declares the same ones. */
  pathParameters?: Json[];
  /**
   * Parameters of this operation alone, before the query's: headers (`$ref`s to
   * `components.parameters`), or a path parameter no other operation of the path has.
   */
  parameters?: Json[];
  /** The strict zod schema the route parses its query with: one parameter per property. */
  query?: z.ZodObject;
  /** A JSON body, required: the `components.schemas` it matches, and an example. */
  body?: { schema: string; example?: unknown };
  responses: Record<string, Json>;
  callbacks?: Json;
}

/** An operation that needs no key, listed under `operations`. */
export const OPEN = { security: [] as [], tags: ['operations'] };

/**
 * Registers `handlers` for `operation` on `router`: its method, at its path (`{id}` read as
 * Express's `:id`).
 * @example mount<{ id: string }>(app, getJob, ...before, async (req, res) => { … })
 */
export function mount<P = Record<string, string>>(
  router: IRouter,
  operation: Operation,
  ...handlers: RequestHandler<P>[]
): void;
/** With an error handler among them (its other handlers' parameters then need their types). */
export function mount<P = Record<string, string>>(
  router: IRouter,
  operation: Operation,
  ...handlers: (RequestHandler<P> | ErrorRequestHandler<P>)[]
): void;
export function mount<P>(
  router: IRouter,
  operation: Operation,
  ...handlers: (RequestHandler<P> | ErrorRequestHandler<P>)[]
): void {
  const add: IRouterMatcher<IRouter> = router[operation.method].bind(router);
  add(routePath(operation), ...handlers);
}

/**
 * The Express path an operation is served at.
 * @example routePath({ path: '/v1/jobs/{id}', … }) // '/v1/jobs/:id'
 */
export function routePath(operation: Operation): string {
  return operation.route ?? operation.path.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * The document's `paths` from the operations, in their order: one path item per path, its path
 * parameters on the item. Throws on two operations with one method and path, or one id: a
 * definition copied and not renamed.
 * @example pathItems([getJob, deleteJob], context) // {'/v1/jobs/{id}': {parameters, get, delete}}
 */
export function pathItems(operations: readonly Operation[], context: DocumentContext): Json {
  const paths: Record<string, Json> = {};
  const ids = new Set<string>();
  for (const operation of operations) {
    const { path, method, operationId } = operation;
    if (ids.has(operationId)) throw new Error(`operationId ${operationId} is declared twice`);
    ids.add(operationId);
    const item = (paths[path] ??= operation.pathParameters
      ? { parameters: operation.pathParameters }
      : {});
    if (item[method]) throw new Error(`${method.toUpperCase()} ${path} is declared twice`);
    if (JSON.stringify(item.parameters) !== JSON.stringify(operation.pathParameters)) {
      throw new Error(`${operationId} declares other path parameters than ${path}'s`);
    }
    item[method] = describe(operation, context);
  }
  return paths;
}

/** The operation object of the document. */
function describe(operation: Operation, context: DocumentContext): Json {
  const { description, query, body } = operation;
  const parameters = [...(operation.parameters ?? []), ...(query ? queryParameters(query) : [])];
  return {
    operationId: operation.operationId,
    ...(operation.tags ? { tags: operation.tags } : {}),
    ...(operation.security ? { security: operation.security } : {}),
    summary: operation.summary,
    ...(description === undefined
      ? {}
      : { description: typeof description === 'string' ? description : description(context) }),
    ...(parameters.length ? { parameters } : {}),
    ...(body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: ref('schemas', body.schema),
                ...(body.example === undefined ? {} : { example: body.example }),
              },
            },
          },
        }
      : {}),
    responses: operation.responses,
    ...(operation.callbacks ? { callbacks: operation.callbacks } : {}),
  };
}
