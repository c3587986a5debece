import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_A, oneShard, startInProcessApi, type InProcessApi } from './helpers/service.js';

// Issue 27 item 18: metric route labels from a fixed set whatever the request's letter case; no
// `X-Powered-By` anywhere; the queue dashboard framed by nobody, under a CSP, and written to only
// from its own origin; an A2A request with an id JSON-RPC does not allow answered as invalid.

// The dashboard's queue is read from one shard's keys.
oneShard();

const ADMIN_KEY = 'admin-key-0123456789abcdef';
const basic = `Basic ${Buffer.from(`ops:${ADMIN_KEY}`).toString('base64')}`;

let api: InProcessApi;
/** The same API with the dashboard writable (LONGRUN_ADMIN_READ_ONLY=false). */
let writable: InProcessApi;
beforeAll(async () => {
  [api, writable] = await Promise.all([
    startInProcessApi({ adminKeys: [ADMIN_KEY] }),
    startInProcessApi({ adminKeys: [ADMIN_KEY], adminReadOnly: false }),
  ]);
});
afterAll(async () => {
  await Promise.all([api?.close(), writable?.close()]);
});

/** A JSON-RPC call to the A2A door, as the official client sends it. */
const rpcHeaders = {
  authorization: `Bearer ${KEY_A}`,
  'content-type': 'application/json',
  'a2a-version': '1.0',
};

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request through node:http, so browser-only headers (Origin, Sec-Fetch-*) go as given. */
function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The `route` labels of the request-duration histogram, with their sample counts. */
async function routeLabels(base: string): Promise<Map<string, number>> {
  const text = (await raw(base, 'GET', '/metrics')).text;
  const labels = new Map<string, number>();
  for (const m of text.matchAll(
    /^longrun_http_request_duration_seconds_count\{method="(\w+)",route="([^"]*)",status="(\d+)"\} (\d+)/gm,
  )) {
    const key = `${m[1]} ${m[2]} ${m[3]}`;
    labels.set(key, (labels.get(key) ?? 0) + Number(m[4]));
  }
  return labels;
}

describe('metric route labels (item 18)', () => {
  it('do not follow the letter case of the path: one series per route', async () => {
    const rpc = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } });
    for (const path of ['/a2a/jsonrpc', '/a2A/JsonRpc', '/A2A/JSONRPC']) {
      const res = await raw(api.url, 'POST', path, rpcHeaders, rpc);
      expect(res.status, path).toBe(200);
    }
    for (const path of ['/admin/queues/api/queues', '/ADMIN/Queues/api/queues']) {
      const res = await raw(api.url, 'GET', path, { authorization: basic });
      expect(res.status, path).toBe(200);
    }
    // A submit in another case is Express's (the fast lane takes only /v1/jobs): the same label.
    const submit = await raw(
      api.url,
      'POST',
      '/V1/Jobs',
      { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      JSON.stringify({ type: 'echo' }),
    );
    expect(submit.status).toBe(202);
    const labels = await routeLabels(api.url);
    const routes = [...labels.keys()].map((k) => k.split(' ')[1] ?? '');
    expect(routes.filter((r) => /[A-Z]/.test(r))).toEqual([]);
    expect(labels.get('POST /a2a/jsonrpc/ 200')).toBe(3);
    expect(labels.get('GET /admin/queues/api/queues 200')).toBe(2);
    expect(labels.get('POST /v1/jobs/ 202')).toBeGreaterThanOrEqual(1);
  });

  it('unknown paths share one label', async () => {
    for (const path of ['/nope', '/NOPE/x', '/a2a/jsonrpcx', '/v1/jobs/a/b/c']) {
      await raw(api.url, 'GET', path, { authorization: `Bearer ${KEY_A}` });
    }
    const routes = new Set([...(await routeLabels(api.url)).keys()].map((k) => k.split(' ')[1]));
    for (const r of routes) {
      expect(r, String(r)).not.toMatch(/nope|jsonrpcx|\/a\/b/i);
    }
    expect(routes.has('unmatched')).toBe(true);
  });
});

describe('no X-Powered-By (item 18)', () => {
  it('is sent by no part of the API: the fast lane, Express, the dashboard', async () => {
    const submit = await raw(
      api.url,
      'POST',
      '/v1/jobs',
      { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      JSON.stringify({ type: 'echo' }),
    );
    expect(submit.status).toBe(202);
    const id = (JSON.parse(submit.text) as { taskId: string }).taskId;
    const answers = [
      submit,
      await raw(api.url, 'GET', `/v1/jobs/${id}`, { authorization: `Bearer ${KEY_A}` }),
      await raw(api.url, 'GET', '/v1/jobs', { authorization: `Bearer ${KEY_A}` }),
      await raw(api.url, 'GET', '/healthz'),
      await raw(api.url, 'GET', '/nope'),
      await raw(api.url, 'GET', '/admin/queues'),
      await raw(api.url, 'GET', '/admin/queues', { authorization: basic }),
      await raw(api.url, 'GET', '/admin/queues/api/queues', { authorization: basic }),
    ];
    expect(answers.map((a) => a.status)).toEqual([202, 200, 200, 200, 404, 401, 200, 200]);
    for (const a of answers) expect(a.headers['x-powered-by']).toBeUndefined();
  });
});

describe('X-Content-Type-Options: nosniff on every answer (issue 41, item 8)', () => {
  it('is sent by the fast lane, Express, problems, event streams, metrics and the documents', async () => {
    const auth = { authorization: `Bearer ${KEY_A}` };
    const submit = await raw(
      api.url,
      'POST',
      '/v1/jobs',
      { ...auth, 'content-type': 'application/json' },
      JSON.stringify({ type: 'echo' }),
    );
    expect(submit.status).toBe(202);
    const id = (JSON.parse(submit.text) as { taskId: string }).taskId;
    const answers = [
      submit,
      await raw(api.url, 'GET', `/v1/jobs/${id}`, auth),
      await raw(api.url, 'GET', '/v1/jobs', auth),
      await raw(api.url, 'GET', '/v1/jobs/nope', auth),
      await raw(api.url, 'POST', '/v1/jobs', { ...auth, 'content-type': 'application/json' }, '{'),
      await raw(api.url, 'GET', '/v1/jobs'),
      await raw(api.url, 'GET', '/healthz'),
      await raw(api.url, 'GET', '/metrics'),
      await raw(api.url, 'GET', '/openapi.json'),
      await raw(api.url, 'GET', '/nope'),
      await raw(api.url, 'DELETE', '/v1/jobs', auth),
    ];
    expect(answers.map((a) => a.status)).toEqual([
      202, 200, 200, 404, 400, 401, 200, 200, 200, 404, 405,
    ]);
    for (const a of answers) expect(a.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('the queue dashboard (item 18)', () => {
  it('may not be framed and runs under a CSP, on every answer under /admin', async () => {
    for (const [path, auth, status] of [
      ['/admin/queues', basic, 200],
      ['/admin/queues/api/queues', basic, 200],
      ['/admin/queues', '', 401],
    ] as const) {
      const res = await raw(api.url, 'GET', path, auth ? { authorization: auth } : {});
      expect(res.status, path).toBe(status);
      expect(res.headers['x-frame-options'], path).toBe('DENY');
      const csp = String(res.headers['content-security-policy']);
      expect(csp, path).toMatch(/frame-ancestors 'none'/);
      expect(csp, path).toMatch(/default-src 'self'/);
      expect(res.headers['x-content-type-options'], path).toBe('nosniff');
    }
  });

  /** Jobs in the dashboard's `tasks` queue, every state. */
  const jobsInTasks = async (on: InProcessApi) => {
    const queue = on.tasks.queues.get('tasks');
    if (!queue) throw new Error('no tasks queue');
    return queue.getJobCountByTypes();
  };

  const addJob = (headers: Record<string, string>, form = false) =>
    raw(
      writable.url,
      'POST',
      '/admin/queues/api/queues/tasks/add',
      {
        authorization: basic,
        'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json',
        ...headers,
      },
      form ? 'name=forged&data=x' : JSON.stringify({ name: 'forged', data: {} }),
    );

  it('refuses a cross-site write with cached credentials (403 problem), adding nothing', async () => {
    const before = await jobsInTasks(writable);
    const forged = [
      // A browser's cross-site form POST: Sec-Fetch-Site and Origin say where it comes from.
      await addJob({ 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, true),
      await addJob({ 'sec-fetch-site': 'same-site', origin: 'http://evil.127.0.0.1.nip.io' }),
      // An older browser without Sec-Fetch-*: the Origin does not match the Host.
      await addJob({ origin: 'https://evil.example' }, true),
      await addJob({ origin: 'null' }, true),
    ];
    for (const res of forged) {
      expect(res.status, res.text).toBe(403);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.text)).toMatchObject({
        status: 403,
        type: '/problems/cross-site-request',
      });
    }
    expect(await jobsInTasks(writable)).toBe(before);
  });

  it('takes a write from its own page, or from a script that is not a browser', async () => {
    const before = await jobsInTasks(writable);
    const host = new URL(writable.url).host;
    const own = await addJob({ 'sec-fetch-site': 'same-origin', origin: `http://${host}` });
    expect(own.status, own.text).toBe(200);
    const olderBrowser = await addJob({ origin: `http://${host}` });
    expect(olderBrowser.status, olderBrowser.text).toBe(200);
    const script = await addJob({});
    expect(script.status, script.text).toBe(200);
    expect(await jobsInTasks(writable)).toBe(before + 3);
    // Reads are not writes: a cross-site GET is answered (the CSP and no framing guard the page).
    const read = await raw(writable.url, 'GET', '/admin/queues/api/queues', {
      authorization: basic,
      'sec-fetch-site': 'cross-site',
    });
    expect(read.status).toBe(200);
  });
});

describe('A2A JSON-RPC ids (item 18)', () => {
  /** JSON text of an id nested `n` deep (built as text: a value that deep is no JS literal). */
  const deepArray = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
  const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

  it.each([
    ['a deeply nested array', deepArray(50_000)],
    ['a deeply nested object', deepObject(50_000)],
    ['an object', '{"a":1}'],
    ['a fraction', '1.5'],
    ['a boolean', 'true'],
  ])('an id that is %s is an invalid request (-32600), not a 500', async (_what, id) => {
    const res = await raw(
      api.url,
      'POST',
      '/a2a/jsonrpc',
      rpcHeaders,
      `{"jsonrpc":"2.0","id":${id},"method":"GetTask","params":{"id":"x"}}`,
    );
    expect(res.status, res.text.slice(0, 200)).toBe(200);
    const body = JSON.parse(res.text) as { id: unknown; error: { code: number } };
    expect(body.error.code).toBe(-32600);
    expect(body.id).toBeNull();
  });

  it('a body nested deeper than the HTTP door allows is an invalid request on both bindings', async () => {
    const rpc = await raw(
      api.url,
      'POST',
      '/a2a/jsonrpc',
      rpcHeaders,
      `{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":${deepArray(50_000)}}}`,
    );
    expect(rpc.status).toBe(200);
    expect(JSON.parse(rpc.text)).toMatchObject({ id: 9, error: { code: -32600 } });
    const rest = await raw(
      api.url,
      'POST',
      '/a2a/rest/v1/message:send',
      rpcHeaders,
      `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":${deepObject(50_000)}}]}}`,
    );
    expect(rest.status, rest.text.slice(0, 200)).toBe(400);
    // What the HTTP door takes as input (64 levels in all) an A2A message may carry as data.
    const ok = await raw(
      api.url,
      'POST',
      '/a2a/rest/v1/message:send',
      rpcHeaders,
      `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"data":{"type":"echo","input":${deepObject(62)}}}]},"configuration":{"returnImmediately":true}}`,
    );
    expect(ok.status, ok.text.slice(0, 300)).toBe(200);
    expect(JSON.parse(ok.text).task.status.state).not.toBe('TASK_STATE_REJECTED');
  });

  it('string, integer and null ids still work', async () => {
    for (const id of ['abc', 7, null]) {
      const res = await raw(
        api.url,
        'POST',
        '/a2a/jsonrpc',
        rpcHeaders,
        JSON.stringify({ jsonrpc: '2.0', id, method: 'GetTask', params: { id: 'nope' } }),
      );
      expect(res.status).toBe(200);
      const body = JSON.parse(res.text) as { id: unknown; error: { code: number } };
      expect(body.id).toEqual(id);
      expect(body.error.code).not.toBe(-32600); // task not found, a valid request
    }
  });
});
