import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { waitFor } from './helpers/http.js';
import { uniquePrefix } from './helpers/service.js';

// Issue 27, item 10: the worker SDK's install command, exactly as README.md documents it, run in
// an empty project. npm must not reach the internet: its registry is a server on loopback that
// knows only the packages of this repository's lockfile (their metadata; no @longrun package,
// as none is published), and their tarballs come from npm's cache, which `npm ci` filled (a
// tarball missing there is a 404 here, not a download).

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const tmp = mkdtempSync(join(tmpdir(), 'longrun-worker-install-'));
const checkout = join(tmp, 'longrun'); // stands for `/path/to/longrun` in the docs
const project = join(tmp, 'my-service');
let registry: Server;
let registryUrl: string;

interface Locked {
  version?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, unknown>;
  os?: string[];
  cpu?: string[];
  engines?: Record<string, string>;
  bin?: Record<string, string>;
  link?: boolean;
}

/** Package name -> version -> its lockfile entry, for every registry package the lockfile holds. */
function lockedPackages(): Map<string, Map<string, Locked>> {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, Locked>;
  };
  const byName = new Map<string, Map<string, Locked>>();
  for (const [path, entry] of Object.entries(lock.packages)) {
    const at = path.lastIndexOf('node_modules/');
    if (at < 0 || entry.link || !entry.version || !entry.integrity) continue;
    const name = path.slice(at + 'node_modules/'.length);
    const versions = byName.get(name) ?? new Map<string, Locked>();
    versions.set(entry.version, entry);
    byName.set(name, versions);
  }
  return byName;
}

/** A registry document of the package, as npm reads one (versions, their deps and tarballs). */
function packument(name: string, versions: Map<string, Locked>, base: string) {
  const file = name.split('/').pop()!;
  const docs = Object.fromEntries(
    [...versions].map(([version, e]) => [
      version,
      {
        name,
        version,
        dependencies: e.dependencies ?? {},
        optionalDependencies: e.optionalDependencies ?? {},
        peerDependencies: e.peerDependencies ?? {},
        peerDependenciesMeta: e.peerDependenciesMeta ?? {},
        ...(e.os ? { os: e.os } : {}),
        ...(e.cpu ? { cpu: e.cpu } : {}),
        ...(e.engines ? { engines: e.engines } : {}),
        ...(e.bin ? { bin: e.bin } : {}),
        dist: { integrity: e.integrity, tarball: `${base}/${name}/-/${file}-${version}.tgz` },
      },
    ]),
  );
  const latest = [...versions.keys()].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))[
    versions.size - 1
  ]!;
  return { name, 'dist-tags': { latest }, versions: docs };
}

/** The documented install command: the README's `npm install` line naming the worker's tarball. */
function documentedCommand(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const line = readme
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith('npm install ') && l.includes('longrun-worker-'));
  if (!line) throw new Error('README.md documents no `npm install` command for @longrun/worker');
  return line.replace(/\s+#.*$/, '');
}

beforeAll(async () => {
  const packages = lockedPackages();
  registry = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!.slice(1));
    const versions = packages.get(path);
    if (req.method !== 'GET' || !versions) {
      // Tarballs too: they must come from npm's cache, never from here.
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify(packument(path, versions, registryUrl)));
  });
  await new Promise<void>((r) => registry.listen(0, '127.0.0.1', r));
  registryUrl = `http://127.0.0.1:${(registry.address() as AddressInfo).port}`;
  await run(process.execPath, [join(root, 'scripts/pack-sdk.mjs'), join(checkout, '.packs')], {
    cwd: root,
  });
  mkdirSync(project, { recursive: true });
  // An empty project, as `npm init` leaves one (ESM, as the SDK is).
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'my-service', version: '1.0.0', private: true, type: 'module' }),
  );
}, 180_000);

afterAll(async () => {
  await new Promise((r) => registry?.close(r));
  rmSync(tmp, { recursive: true, force: true });
});

it('the documented command installs the worker SDK in an empty project, and it loads', async () => {
  const command = documentedCommand().replaceAll('/path/to/longrun', checkout);
  const [npm, ...args] = command.split(/\s+/);
  expect(npm).toBe('npm');
  const env = {
    ...Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')),
    ),
    npm_config_registry: `${registryUrl}/`,
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
  const installed = await run('npm', args, { cwd: project, env, timeout: 240_000 }).then(
    () => 'ok',
    (e: { stderr?: string; message: string }) => `${e.stderr ?? ''}${e.message}`,
  );
  expect(installed, command).toBe('ok');
  const { stdout } = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { createWorker, defineJobType } from '@longrun/worker';
       import { z } from 'zod';
       const job = defineJobType({ name: 'hello', input: z.object({ to: z.string() }), handler: (i) => i });
       console.log(JSON.stringify({ createWorker: typeof createWorker, job: job.name }));`,
    ],
    { cwd: project, env },
  );
  expect(JSON.parse(stdout)).toEqual({ createWorker: 'function', job: 'hello' });
}, 300_000);

/** A fenced block of README.md (its lines) whose text contains `marker`. */
function readmeBlock(lang: string, marker: string): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const blocks = readme.split(`\`\`\`${lang}\n`).slice(1);
  const block = blocks.map((b) => b.split('\n```')[0]!).find((b) => b.includes(marker));
  if (!block) throw new Error(`README.md has no ${lang} block with ${marker}`);
  return block.split('\n');
}

it('the documented commands make a working project from an empty folder (issue 41)', async () => {
  const dir = join(tmp, 'from-empty');
  mkdirSync(dir);
  const snippet = join(tmp, 'worker.ts');
  writeFileSync(snippet, readmeBlock('ts', 'export const resizeJob').join('\n'));
  const lines = readmeBlock('sh', 'npm pkg set type=module');
  const last = lines.filter((l) => l.trim() !== '').at(-1)!;
  expect(last).toMatch(/ node worker\.js$/);
  // Every line but the last (which runs the worker, below), the snippet saved where it says so.
  const script = lines
    .filter((l) => l !== last)
    .map((l) => (l.startsWith('# save the snippet') ? `cp ${snippet} worker.ts` : l))
    .join('\n')
    .replaceAll('/path/to/longrun', checkout);
  const env = {
    ...Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')),
    ),
    npm_config_registry: `${registryUrl}/`,
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
  const made = await run('bash', ['-e', '-c', script], { cwd: dir, env, timeout: 240_000 }).then(
    () => 'ok',
    (e: { stdout?: string; stderr?: string; message: string }) =>
      `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}`,
  );
  expect(made, script).toBe('ok');
  const project = join(dir, 'my-service');
  expect(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).type).toBe('module');
  const worker = spawn(process.execPath, ['worker.js'], {
    cwd: project,
    env: { ...env, REDIS_URL: inject('redisUrl'), LONGRUN_PREFIX: uniquePrefix() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  worker.stdout.on('data', (d: Buffer) => (output += d.toString()));
  worker.stderr.on('data', (d: Buffer) => (output += d.toString()));
  try {
    await waitFor(async () => /worker ready/.test(output) || undefined, {
      timeoutMs: 30_000,
      what: `the worker to start:\n${output}`,
    });
    expect(output).toMatch(/resize/);
  } finally {
    worker.kill('SIGTERM');
  }
}, 300_000);
