import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Express } from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ApiKeys, createApp } from '@longrun/api';
import { createRedis } from '@longrun/engine';
import { catalog } from '@longrun/worker-app';
import { buildEngine, KEY_A, startInProcessApi, type InProcessApi } from './helpers/service.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document is free-form JSON
type Doc = any;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const MAX_TTL_MS = 3_600_000;
/** Served by the docs router as parts of the /docs page, not API operations. */
const PAGE_ASSETS = ['GET /docs/init.js', 'GET /docs/assets/{file}'];
/**
 * The agent-protocol doors' routes: the A2A specification and its Agent Card, and MCP's own
 * discovery (`tools/list`, `server/discover`), describe them, not OpenAPI.
 */
const PROTOCOL_DOORS = /^[A-Z-]+ \/(a2a\/|\.well-known\/agent-card\.json$|mcp$)/;

let api: InProcessApi;
let doc: Doc;

beforeAll(async () => {
  api = await startInProcessApi({ maxTtlMs: MAX_TTL_MS });
  const res = await api.http('GET', '/openapi.json', { key: null });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = res.body;
});
afterAll(async () => {
  await api?.close();
});

/** "METHOD /path" for every operation in the document. */
function documentedOperations(document: Doc): string[] {
  return Object.entries(document.paths as Record<string, Doc>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${path}`),
  );
}

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
  rawPath?: unknown;
}

/** "METHOD /path" for every route in an Express 5 app, found by walking its router stack. */
function servedRoutes(app: Express): string[] {
  const routes: string[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      const path = typeof layer.rawPath === 'string' ? layer.rawPath : '';
      if (layer.route) {
        const full = `${prefix}${layer.route.path}`.replace(/(.)\/$/, '$1');
        const templated = full.replace(/:(\w+)/g, '{$1}');
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (on && method !== '_all') routes.push(`${method.toUpperCase()} ${templated}`);
        }
      } else if (layer.handle.stack) {
        walk(layer.handle.stack, `${prefix}${path === '/' ? '' : path}`);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return routes;
}

/** The app exactly as `createApp` builds it, on real Redis connections (never listening). */
async function buildApp() {
  const redisUrl = inject('redisUrl');
  const connection = createRedis(redisUrl, 'producer');
  const subscriber = createRedis(redisUrl, 'subscriber');
  connection.on('error', () => undefined);
  subscriber.on('error', () => undefined);
  const { engine, types } = await buildEngine(connection, subscriber, {
    maxTtlMs: MAX_TTL_MS,
    defaultTtlMs: 60_000,
  });
  const app = createApp({
    engine,
    keys: new ApiKeys(new Map([[KEY_A, 'alpha']])),
    logger: pino({ level: 'silent' }),
    maxTtlMs: MAX_TTL_MS,
    rateLimitRps: 0,
  });
  return {
    app,
    async close() {
      await engine.close().catch(() => undefined);
      await types.close();
      connection.disconnect();
      subscriber.disconnect();
    },
  };
}

/** A validator for one schema of the dereferenced document, compiled by a real JSON Schema validator. */
async function validatorFor(pick: (dereferenced: Doc) => object) {
  const dereferenced = await SwaggerParser.dereference(structuredClone(doc));
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  return ajv.compile(pick(dereferenced));
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  it('declares every path template parameter', () => {
    for (const [path, item] of Object.entries(doc.paths as Record<string, Doc>)) {
      for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
        for (const method of METHODS.filter((m) => item[m])) {
          const params = [...(item.parameters ?? []), ...(item[method].parameters ?? [])].map(
            (p: Doc) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop() as string] : p),
          );
          expect(params, `${method} ${path}`).toContainEqual(
            expect.objectContaining({ name, in: 'path', required: true }),
          );
        }
      }
    }
  });

  it('documents exactly the routes the app serves', async () => {
    const built = await buildApp();
    try {
      const served = servedRoutes(built.app).filter(
        (r) => !PAGE_ASSETS.includes(r) && !PROTOCOL_DOORS.test(r),
      );
      const documented = documentedOperations(doc);
      // Both directions: no undocumented route, no documented route that does not exist.
      expect(new Set(documented)).toEqual(new Set(served));
      expect(served).toContain('GET /v1/jobs/{id}/events');
      expect(served).toContain('POST /v1/jobs/{id}/cancel');
    } finally {
      await built.close();
    }
  });

  it('needs a bearer key exactly where the API does', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    for (const operation of documentedOperations(doc)) {
      const [method, path] = operation.split(' ') as [string, string];
      const security = doc.paths[path][method.toLowerCase()].security;
      if (path.startsWith('/v1/')) expect(security, operation).toBeUndefined();
      else expect(security, operation).toEqual([]);
    }
  });

  it('lists the statuses, headers and problem bodies of each operation', () => {
    const expected: Record<string, number[]> = {
      'POST /v1/jobs': [202, 400, 401, 409, 413, 415, 422, 429, 503, 507],
      'GET /v1/jobs': [200, 400, 401, 429, 503],
      'GET /v1/jobs/{id}': [200, 400, 401, 404, 429, 503],
      'POST /v1/jobs/{id}/replay': [202, 400, 401, 404, 413, 415, 422, 429, 503, 507],
      'POST /v1/jobs/replay': [207, 400, 401, 413, 415, 429, 503, 507],
      'DELETE /v1/jobs/{id}': [204, 401, 404, 409, 429, 503],
      'GET /v1/jobs/{id}/result': [200, 400, 401, 404, 409, 429, 503],
      'POST /v1/jobs/{id}/cancel': [200, 400, 401, 404, 409, 413, 415, 429, 503, 507],
      'POST /v1/jobs/{id}/input': [200, 400, 401, 404, 409, 413, 415, 422, 429, 503, 507],
      'GET /v1/jobs/{id}/events': [200, 400, 401, 404, 429, 503],
      'POST /v1/schedules': [201, 400, 401, 409, 413, 415, 422, 429, 503, 507],
      'GET /v1/schedules': [200, 401, 429, 503],
      'GET /v1/schedules/{id}': [200, 401, 404, 429, 503],
      'DELETE /v1/schedules/{id}': [204, 401, 404, 429, 503],
      'GET /readyz': [200, 503],
    };
    for (const [operation, codes] of Object.entries(expected)) {
      const [method, path] = operation.split(' ') as [string, string];
      const responses = doc.paths[path][method.toLowerCase()].responses;
      expect(Object.keys(responses).map(Number), operation).toEqual(expect.arrayContaining(codes));
      expect(Object.keys(responses), operation).toHaveLength(codes.length);
    }

    const submit = doc.paths['/v1/jobs'].post;
    expect(Object.keys(submit.responses['202'].headers)).toEqual([
      'Location',
      'Retry-After',
      'Idempotent-Replayed',
    ]);
    expect(submit.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({
      name: 'Idempotency-Key',
      in: 'header',
    });
    expect(doc.paths['/v1/jobs/{id}/events'].get.parameters).toContainEqual({
      $ref: '#/components/parameters/LastEventId',
    });
    expect(doc.components.parameters.LastEventId).toMatchObject({
      name: 'Last-Event-ID',
      in: 'header',
    });
    expect(doc.paths['/v1/jobs/{id}/events'].get.responses['200'].content).toHaveProperty(
      'text/event-stream',
    );
    expect(doc.paths['/v1/jobs/{id}/result'].get.parameters).toContainEqual(
      expect.objectContaining({
        name: 'wait',
        in: 'query',
        schema: expect.objectContaining({ maximum: 30 }),
      }),
    );
    expect(doc.components.responses.Unauthorized.headers).toHaveProperty('WWW-Authenticate');
    expect(doc.components.responses.Unavailable.headers).toHaveProperty('Retry-After');

    // Every error answer of a /v1 route is problem+json.
    for (const operation of documentedOperations(doc).filter((o) => o.includes(' /v1/'))) {
      const [method, path] = operation.split(' ') as [string, string];
      for (const [status, response] of Object.entries(
        doc.paths[path][method.toLowerCase()].responses as Record<string, Doc>,
      )) {
        if (Number(status) < 400) continue;
        const resolved = response.$ref
          ? doc.components.responses[response.$ref.split('/').pop()]
          : response;
        expect(Object.keys(resolved.content), `${operation} ${status}`).toEqual([
          'application/problem+json',
        ]);
      }
    }
  });

  it('describes the callback field and the webhook it triggers', () => {
    for (const name of catalog.keys()) {
      expect(doc.components.schemas[`CreateJobRequest.${name}`].properties.callback).toEqual({
        $ref: '#/components/schemas/Callback',
      });
    }
    expect(doc.components.schemas.Callback.required).toEqual(['url']);
    const delivery = doc.components.pathItems.TaskUpdatedDelivery.post;
    expect(doc.webhooks['task.updated']).toEqual(doc.components.pathItems.TaskUpdatedDelivery);
    expect(delivery.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/WebhookPayload',
    });
    expect(delivery.parameters.map((p: Doc) => p.name)).toEqual([
      'Longrun-Delivery-Id',
      'Longrun-Timestamp',
      'Longrun-Signature',
    ]);
    expect(doc.paths['/v1/jobs'].post.callbacks.taskUpdated).toHaveProperty(
      '{$request.body#/callback/url}',
    );
  });

  it('describes the submit body as a union keyed on `type`, one variant per registered type', () => {
    const union = doc.components.schemas.CreateJobRequest;
    const names = [...catalog.keys()].sort(); // the registry lists types by name
    const variant = (name: string) => `#/components/schemas/CreateJobRequest.${name}`;
    expect(union.oneOf).toEqual(names.map((name) => ({ $ref: variant(name) })));
    expect(union.discriminator).toEqual({
      propertyName: 'type',
      mapping: Object.fromEntries(names.map((name) => [name, variant(name)])),
    });
    for (const name of names) {
      const schema = doc.components.schemas[`CreateJobRequest.${name}`];
      expect(schema.properties.type, name).toEqual({ type: 'string', const: name });
      expect(schema.properties.input, name).toEqual({
        $ref: `#/components/schemas/JobInput.${name}`,
      });
      expect(schema.additionalProperties, name).toBe(false);
    }
    // `input` has no default (generators read one as "required"). The API reads a missing input
    // as `{}`: optional where `{}` passes the type's schema, required where it never can.
    const requests = Object.entries(doc.components.schemas).filter(([id]) =>
      /^(CreateJobRequest|JobInput)\b/.test(id),
    );
    expect(requests.length).toBe(1 + 2 * names.length);
    for (const [id, schema] of requests)
      expect(JSON.stringify(schema), id).not.toMatch(/"default":/);
    expect(doc.components.schemas['CreateJobRequest.echo'].required).toEqual(['type']);
    expect(doc.components.schemas['CreateJobRequest.sleep'].required).toEqual(['type', 'input']);
  });

  it('the submit body matches what the API does with a missing input', async () => {
    const validate = await validatorFor(
      (d) => d.paths['/v1/jobs'].post.requestBody.content['application/json'].schema,
    );
    for (const type of ['echo', 'sleep']) {
      const live = await api.http('POST', '/v1/jobs', { body: { type, ttlMs: 60_000 } });
      expect(live.status === 202, `${type}: ${live.status} ${live.text}`).toBe(
        validate({ type, ttlMs: 60_000 }),
      );
    }
  });

  it("the events example's ids are ids the API sends and accepts back", () => {
    const example: string =
      doc.paths['/v1/jobs/{id}/events'].get.responses['200'].content['text/event-stream'].example;
    const ids = [...example.matchAll(/^id: (.*)$/gm)].map((m) => m[1] as string);
    expect(ids.length).toBeGreaterThan(0);
    const pattern = new RegExp(doc.components.parameters.LastEventId.schema.pattern as string);
    for (const id of ids) expect(id, 'an event id is the event number: 1, 2, …').toMatch(pattern);
  });

  it("publishes each job type's input schema", () => {
    for (const name of catalog.keys()) {
      expect(doc.components.schemas).toHaveProperty([`JobInput.${name}`]);
    }
    expect(doc.components.schemas['JobInput.sleep']).toMatchObject({
      required: ['ms'],
      additionalProperties: false,
    });
  });
});

describe('the document came from the strict zod schemas', () => {
  it('its submit schema rejects `ttl`, as the API does', async () => {
    const validate = await validatorFor(
      (d) => d.paths['/v1/jobs'].post.requestBody.content['application/json'].schema,
    );
    expect(validate({ type: 'echo', input: { a: 1 }, ttlMs: 60_000 })).toBe(true);
    // Each input is checked against its own type's schema; an unregistered type matches nothing.
    expect(validate({ type: 'sleep', input: { ms: 1000 } })).toBe(true);
    expect(validate({ type: 'sleep', input: { ms: 'soon' } })).toBe(false);
    expect(validate({ type: 'nope', input: {} })).toBe(false);
    expect(validate({ type: 'echo', input: {}, ttl: 60_000 })).toBe(false);
    expect(validate.errors).toContainEqual(
      expect.objectContaining({
        keyword: 'additionalProperties',
        params: { additionalProperty: 'ttl' },
      }),
    );
    // The bounds the API enforces made it in too: maxTtlMs of this API, callback secret length.
    expect(validate({ type: 'echo', ttlMs: MAX_TTL_MS + 1 })).toBe(false);
    expect(validate({ type: 'echo', callback: { url: 'https://x.test/h', secret: 'short' } })).toBe(
      false,
    );

    const live = await api.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: {}, ttl: 60_000 },
    });
    expect(live.status).toBe(400);
    expect(live.body.errors).toContainEqual(expect.objectContaining({ path: 'ttl' }));
  });

  it('every example in it matches its own schema', async () => {
    const dereferenced = await SwaggerParser.dereference(structuredClone(doc));
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    let checked = 0;
    for (const [path, item] of Object.entries(dereferenced.paths as Record<string, Doc>)) {
      for (const method of METHODS.filter((m) => item[m])) {
        const operation = item[method];
        const media = [
          ...Object.values(operation.requestBody?.content ?? {}),
          ...Object.values(operation.responses as Record<string, Doc>).flatMap((r) =>
            Object.values(r.content ?? {}),
          ),
        ] as Doc[];
        for (const { schema, example } of media.filter((m) => m.example !== undefined)) {
          const validate = ajv.compile(schema);
          expect(validate(example), `${method} ${path}: ${JSON.stringify(validate.errors)}`).toBe(
            true,
          );
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(5);
  });

  it("the API's real answers match the documented response schemas", async () => {
    const handle = await validatorFor((d) => d.components.schemas.TaskHandle);
    const list = await validatorFor((d) => d.components.schemas.TaskList);
    const problem = await validatorFor((d) => d.components.schemas.Problem);
    const conflict = await validatorFor((d) => d.components.schemas.TaskConflictProblem);

    const submitted = await api.http('POST', '/v1/jobs', {
      body: { type: 'sleep', input: { ms: 60_000 } },
    });
    expect(submitted.status).toBe(202);
    expect(handle(submitted.body), JSON.stringify(handle.errors)).toBe(true);
    const id = submitted.body.taskId as string;

    const listed = await api.http('GET', '/v1/jobs?limit=5');
    expect(list(listed.body), JSON.stringify(list.errors)).toBe(true);

    const early = await api.http('GET', `/v1/jobs/${id}/result`);
    expect(early.status).toBe(409);
    expect(conflict(early.body), JSON.stringify(conflict.errors)).toBe(true);

    const missing = await api.http('GET', '/v1/jobs/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(problem(missing.body), JSON.stringify(problem.errors)).toBe(true);

    const anonymous = await api.http('GET', `/v1/jobs/${id}`, { key: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(problem(anonymous.body), JSON.stringify(problem.errors)).toBe(true);

    const cancelled = await api.http('POST', `/v1/jobs/${id}/cancel`);
    expect(handle(cancelled.body), JSON.stringify(handle.errors)).toBe(true);

    const schedule = await validatorFor((d) => d.components.schemas.Schedule);
    const schedules = await validatorFor((d) => d.components.schemas.ScheduleList);
    const request = await validatorFor((d) => d.components.schemas.CreateScheduleRequest);
    const body = { type: 'sleep', input: { ms: 10 }, cron: '0 6 * * *', tz: 'UTC', ttlMs: 60_000 };
    expect(request(body), JSON.stringify(request.errors)).toBe(true);
    expect(request({ ...body, every: 1000 })).toBe(false);
    const created = await api.http('POST', '/v1/schedules', { body });
    expect(created.status).toBe(201);
    expect(schedule(created.body), JSON.stringify(schedule.errors)).toBe(true);
    const all = await api.http('GET', '/v1/schedules');
    expect(schedules(all.body), JSON.stringify(schedules.errors)).toBe(true);
    const gone = await api.http('GET', '/v1/schedules/00000000-0000-4000-8000-000000000000');
    expect(gone.status).toBe(404);
    expect(problem(gone.body), JSON.stringify(problem.errors)).toBe(true);
    expect((await api.http('DELETE', `/v1/schedules/${created.body.scheduleId}`)).status).toBe(204);
  });
});
