import { createServer, request, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeys } from '../apps/api/src/http/auth.js';
import { fastLane } from '../apps/api/src/http/fast-lane.js';
import { httpClient, type HttpResult } from './helpers/http.js';
import { KEY_A, KEY_B, startInProcessApi, type InProcessApi } from './helpers/service.js';

// Submits and polls are answered without Express where they can be (decision 42). The lane must
// answer them as the Express routes do, and leave every other request to Express.

let lane: InProcessApi;
let express: InProcessApi;
beforeAll(async () => {
  [lane, express] = await Promise.all([
    startInProcessApi({ fastLane: true, maxOpenTasks: 20 }),
    startInProcessApi({ fastLane: false, maxOpenTasks: 20 }),
  ]);
});
afterAll(async () => {
  await Promise.all([lane.close(), express.close()]);
});

/** What two answers may differ in: ids, times, dates. */
function comparable(res: HttpResult) {
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (name === 'date' || name === 'keep-alive' || name === 'connection') return;
    headers[name] = name === 'x-request-id' && value.length === 36 ? '<random>' : value;
  });
  const text = res.text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>');
  if (headers.location) headers.location = headers.location.replace(/[0-9a-f-]{36}$/, '<id>');
  if (headers['content-length']) headers['content-length'] = String(text.length);
  return { status: res.status, headers, text };
}

type Req = Parameters<ReturnType<typeof httpClient>>[2] & { path?: string };

const deep = (n: number): unknown => (n === 0 ? 1 : { a: deep(n - 1) });
const submits: [string, Req][] = [
  ['a submit', { body: { type: 'echo', input: { n: 1 } } }],
  ['a submit on /v1/jobs/', { path: '/v1/jobs/', body: { type: 'echo' } }],
  ['its own request id, echoed', { body: { type: 'echo' }, headers: { 'x-request-id': 'rq-1' } }],
  ['an Idempotency-Key', { body: { type: 'echo' }, headers: { 'idempotency-key': 'k-1' } }],
  [
    'the same key again: replayed',
    { body: { type: 'echo' }, headers: { 'idempotency-key': 'k-1' } },
  ],
  [
    'the same key, another body',
    { body: { type: 'sleep' }, headers: { 'idempotency-key': 'k-1' } },
  ],
  [
    'a malformed Idempotency-Key',
    { body: { type: 'echo' }, headers: { 'idempotency-key': 'x'.repeat(300) } },
  ],
  ['an invalid body', { body: { type: 'echo', ttl: 5 } }],
  ['an unknown type', { body: { type: 'nope' } }],
  ['an array', { body: [1, 2] }],
  ['a number', { raw: '42', headers: { 'content-type': 'application/json' } }],
  ['not JSON', { raw: '{"type":', headers: { 'content-type': 'application/json' } }],
  ['too deep', { body: deep(70) }],
  ['text/plain', { raw: '{"type":"echo"}', headers: { 'content-type': 'text/plain' } }],
  [
    'latin-1',
    { raw: '{"type":"echo"}', headers: { 'content-type': 'application/json; charset=latin1' } },
  ],
  ['vnd+json', { raw: '{"type":"echo"}', headers: { 'content-type': 'application/vnd.api+json' } }],
  ['no body', { headers: { 'content-type': 'application/json' } }],
  [
    'a bare charset parameter',
    { raw: '{"type":"echo"}', headers: { 'content-type': 'application/json; charset' } },
  ],
  ['a malformed type', { raw: '{"type":"echo"}', headers: { 'content-type': '; ;' } }],
  ['no key', { body: { type: 'echo' }, key: null }],
  ['a wrong key', { body: { type: 'echo' }, key: 'nope-nope-nope' }],
  ['with a query', { path: '/v1/jobs?x=1', body: { type: 'echo' } }],
];

describe('the fast lane', () => {
  it('answers every submit as the Express route does: headers, status and body', async () => {
    for (const [what, { path = '/v1/jobs', ...req }] of submits) {
      const a = await lane.http('POST', path, req);
      const b = await express.http('POST', path, req);
      expect(comparable(a), what).toEqual(comparable(b));
    }
    // The other tenant's key works as well; its cap (20 open tasks) is reached as the route's is.
    for (const api of [lane, express]) {
      const other = httpClient(api.url, KEY_B);
      const answers = [];
      for (let i = 0; i < 21; i++)
        answers.push((await other('POST', '/v1/jobs', { body: { type: 'echo' } })).status);
      expect(answers).toEqual([...Array<number>(20).fill(202), 429]);
    }
  });

  it('answers every poll as the Express route does', async () => {
    const polls = async (api: InProcessApi) => {
      const other = httpClient(api.url, KEY_B);
      const mine = (await api.http('POST', '/v1/jobs', { body: { type: 'echo' } })).body.taskId;
      const theirs = (await other('POST', '/v1/jobs', { body: { type: 'echo' } })).body.taskId;
      const done = (await api.http('POST', '/v1/jobs', { body: { type: 'echo' } })).body.taskId;
      await api.http('POST', `/v1/jobs/${done}/cancel`);
      const answers: HttpResult[] = [];
      const poll = async (path: string, req: Req = {}, method = 'GET') =>
        answers.push(await api.http(method, path, req));
      await poll(`/v1/jobs/${mine}`); // working: Retry-After
      await poll(`/v1/jobs/${done}`); // cancelled: none
      await poll(`/v1/jobs/${theirs}`); // another tenant's: 404
      await poll(`/v1/jobs/${mine}`, { key: KEY_B }); // the same, seen by the other tenant
      await poll('/v1/jobs/00000000-0000-4000-8000-000000000000'); // none such
      await poll(`/v1/jobs/${mine}`, { key: null }); // no key: 401
      await poll(`/v1/jobs/${mine}`, { headers: { 'x-request-id': 'rq-2' } });
      await poll(`/v1/jobs/${mine}/`); // trailing slash: Express's own match
      await poll(`/v1/jobs/${mine}?x=1`);
      await poll(`/v1/jobs/${mine.slice(0, 8)}%2D${mine.slice(9)}`); // encoded: Express decodes
      await poll('/v1/jobs/batch');
      await poll(`/v1/jobs/${'x'.repeat(129)}`);
      await poll(`/v1/jobs/${mine}`, {}, 'HEAD');
      return answers.map(comparable);
    };
    const [a, b] = [await polls(lane), await polls(express)];
    expect(a.map((r) => r.status)).toEqual([
      200, 200, 404, 404, 404, 401, 200, 200, 200, 200, 404, 404, 200,
    ]);
    expect(a).toEqual(b);
    expect(a[0]!.headers['retry-after']).toBeDefined();
    expect(a[1]!.headers['retry-after']).toBeUndefined();
  });

  it('answers If-None-Match: * with 304 on a poll, as res.json did, unless no-cache', async () => {
    // Over node:http, not fetch (which adds Cache-Control: no-cache to a conditional request).
    const raw = (base: string, path: string, headers: Record<string, string>) =>
      new Promise<{ status: number; body: string; type: string | undefined }>((resolve, reject) => {
        const req = request(`${base}${path}`, { headers }, (res) => {
          let body = '';
          res
            .on('data', (c: Buffer) => (body += c.toString()))
            .on('end', () =>
              resolve({ status: res.statusCode ?? 0, body, type: res.headers['content-type'] }),
            );
        });
        req.on('error', reject).end();
      });
    for (const api of [lane, express]) {
      const id = (await api.http('POST', '/v1/jobs', { body: { type: 'echo' } })).body.taskId;
      const auth = { authorization: `Bearer ${KEY_A}` };
      const star = await raw(api.url, `/v1/jobs/${id}`, { ...auth, 'if-none-match': '*' });
      expect(star).toEqual({ status: 304, body: '', type: undefined });
      const noCache = { ...auth, 'if-none-match': '*', 'cache-control': 'no-cache' };
      expect((await raw(api.url, `/v1/jobs/${id}`, noCache)).status).toBe(200);
      const other = await raw(api.url, `/v1/jobs/${id}`, { ...auth, 'if-none-match': '"x"' });
      expect(other.status).toBe(200);
    }
  });

  it('counts its answers under the route Express names', async () => {
    await lane.http('POST', '/v1/jobs', { body: { type: 'echo' } });
    const metrics = await fetch(`${lane.url}/metrics`).then((r) => r.text());
    /** The request count of one route and status, from the duration histogram. */
    const count = (route: string, status: number) => {
      const line = metrics
        .split('\n')
        .find(
          (l) =>
            l.startsWith('longrun_http_request_duration_seconds_count{') &&
            l.includes(`route="${route}"`) &&
            l.includes(`status="${status}"`),
        );
      return Number(line?.split(' ').pop());
    };
    expect(count('/v1/jobs/', 202)).toBeGreaterThanOrEqual(6);
    expect(count('/v1/jobs/:id', 200)).toBeGreaterThanOrEqual(5);
  });
});

describe('what the lane takes', () => {
  let server: Server;
  let http: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    // Behind the lane, an app that answers 599 to everything: whatever reaches it, the lane left.
    const app: RequestListener = (_req, res) => {
      res.statusCode = 599;
      res.end('app');
    };
    const listener = fastLane(app, {
      engine: lane.engine,
      keys: new ApiKeys(new Map([[KEY_A, 'alpha']])),
      logger: pino({ level: 'silent' }),
      observe: () => undefined,
    });
    server = await new Promise((resolve) => {
      const s = createServer(listener).listen(0, '127.0.0.1', () => resolve(s));
    });
    http = httpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, KEY_A);
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('answers well-formed submits itself, refusals of their body included', async () => {
    expect((await http('POST', '/v1/jobs', { body: { type: 'echo' } })).status).toBe(202);
    expect((await http('POST', '/v1/jobs/', { body: { type: 'echo' } })).status).toBe(202);
    expect((await http('POST', '/v1/jobs', { body: { type: 'nope' } })).status).toBe(400);
    expect(
      (
        await http('POST', '/v1/jobs', {
          raw: '{',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
    const tooDeep = await http('POST', '/v1/jobs', { body: deep(70) });
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.type).toMatch(/too-deep$/);
    expect(tooDeep.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  });

  it('answers polls itself', async () => {
    const id = (await http('POST', '/v1/jobs', { body: { type: 'echo' } })).body.taskId;
    expect((await http('GET', `/v1/jobs/${id}`)).body.taskId).toBe(id);
    expect((await http('GET', '/v1/jobs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('leaves everything else to the app, unread', async () => {
    const left: [string, string, Req][] = [
      ['GET', '/v1/jobs', {}],
      ['GET', '/v1/jobs/abc/', {}],
      ['GET', '/v1/jobs/abc?x=1', {}],
      ['GET', '/v1/jobs/a%2Db', {}],
      ['GET', '/v1/jobs/abc/result', {}],
      ['GET', '/v1/jobs/abc', { key: null }],
      ['HEAD', '/v1/jobs/abc', {}],
      ['POST', '/v1/jobs/batch', { body: { items: [] } }],
      ['POST', '/v1/jobs?wait=1', { body: { type: 'echo' } }],
      ['POST', '/v1/jobs', { body: { type: 'echo' }, key: null }],
      ['POST', '/v1/jobs', { body: { type: 'echo' }, key: KEY_B }],
      ['POST', '/v1/jobs', { raw: '{}', headers: { 'content-type': 'text/plain' } }],
      [
        'POST',
        '/v1/jobs',
        { raw: '{}', headers: { 'content-type': 'application/json; charset=latin1' } },
      ],
      ['POST', '/v1/jobs', { headers: { 'content-type': 'application/json' } }],
      ['PUT', '/v1/jobs', { body: { type: 'echo' } }],
    ];
    for (const [method, path, req] of left) {
      const res = await http(method, path, req);
      // (A HEAD answer has no body.)
      expect([res.status, res.text], `${method} ${path} ${JSON.stringify(req)}`).toEqual([
        599,
        method === 'HEAD' ? '' : 'app',
      ]);
    }
  });
});
