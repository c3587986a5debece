import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { httpClient } from './helpers/http.js';
import { startApp } from './helpers/processes.js';
import { API_KEYS, KEY_A, startWorker, uniquePrefix } from './helpers/service.js';

// @longrun/client as a user meets it: packed by `npm run pack:sdk` (as `npm publish` would ship
// it), installed with npm into an empty ESM project outside the workspaces, its job types
// generated with `longrun types --typescript`, a consumer compiled with `tsc --strict` against
// the installed types and run with node against the built API and stock worker processes.

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const TSC = join(root, 'node_modules/.bin/tsc');
const CLI = join(root, 'apps/cli/dist/main.js');
const tmp = mkdtempSync(join(tmpdir(), 'longrun-client-pack-'));
const app = join(tmp, 'app');
const prefix = uniquePrefix();
const stops: (() => Promise<unknown>)[] = [];
let apiUrl: string;

/** npm settings of the surrounding `npm test` (workspace, prefix) must not reach the project. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')),
    ),
    ...extra,
  };
}

interface Outcome {
  code: number;
  output: string;
}

/** Runs a command to its end; a non-zero exit is an outcome, not an exception. */
async function outcome(file: string, args: string[], cwd: string): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd, env: cleanEnv(), timeout: 120_000 });
    return { code: 0, output: `${stdout}${stderr}` };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string; message: string };
    return { code: e.code ?? -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}` };
  }
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).replaceAll('\\', '/'));
}

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- package.json fields

const tsconfig = (files: Record<string, string[]>, extra: Record<string, unknown>) =>
  JSON.stringify({
    ...files,
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      types: ['node'],
      // The installed declarations are checked too: a broken .d.ts in the tarball fails here.
      skipLibCheck: false,
      ...extra,
    },
  });

/** The consumer: what a user writes after `npm install @longrun/client`. */
const MAIN = `import { createClient, isTerminal, LongrunError, type JobInput } from '@longrun/client';
import type { LongrunJobTypes } from './longrun-types.js';

const lr = createClient<LongrunJobTypes>({
  baseUrl: process.env.LONGRUN_URL ?? 'http://localhost:3000',
  apiKey: process.env.LONGRUN_API_KEY ?? '',
});

// Submit and wait.
const { taskId } = await lr.submit('echo', { greeting: 'from the packed client', n: 3 });
const done = await lr.wait(taskId, { timeoutMs: 20_000 });

// A task that asks a question: wait returns at input_required, answer it, wait again.
const asked = await lr.submit('approval', { question: 'Ship release 42?' });
const question = await lr.wait(asked.taskId, { timeoutMs: 20_000 });
await lr.input(asked.taskId, { approved: true, comment: 'go' });
const answered = await lr.wait(asked.taskId, { timeoutMs: 20_000 });

// Cancel a long one.
const slow = await lr.submit('sleep', { ms: 600_000 });
const cancelled = await lr.cancel(slow.taskId);

// The API refuses a value the types cannot express (ms >= 0): a LongrunError naming the field.
const refused = await lr.submit('sleep', { ms: -1 }).then(
  () => 'accepted',
  (e: unknown) =>
    e instanceof LongrunError
      ? { status: e.status, code: e.code, paths: (e.errors ?? []).map((f) => f.path) }
      : \`not a LongrunError: \${String(e)}\`,
);

console.log(
  JSON.stringify({
    taskId,
    status: done.status,
    terminal: isTerminal(done.status),
    result: done.result,
    question: { status: question.status, message: question.inputRequest?.message },
    answered: { status: answered.status, result: answered.result },
    cancelled: { taskId: slow.taskId, status: cancelled.status },
    refused,
  }),
);

/** Never called: tsc checks these lines. An unused @ts-expect-error fails the compile. */
export async function compileOnly(): Promise<void> {
  const input: JobInput<LongrunJobTypes, 'sleep'> = { ms: 5 };
  await lr.submit('sleep', input);
  // @ts-expect-error sleep's ms is a number
  await lr.submit('sleep', { ms: 'soon' });
  // @ts-expect-error sleep takes nothing but ms
  await lr.submit('sleep', { ms: 1, extra: true });
  // @ts-expect-error approval needs a question
  await lr.submit('approval', {});
  // @ts-expect-error not a registered job type
  await lr.submit('resize', {});
}
`;

/** A consumer in a browser project: only the client, no Node types. */
const BROWSER = `import { createClient, isTerminal } from '@longrun/client';
const lr = createClient({ baseUrl: location.origin, apiKey: 'key-from-your-login-flow' });
export async function run(): Promise<boolean> {
  const { taskId } = await lr.submit('echo', { from: 'a browser' });
  return isTerminal((await lr.wait(taskId)).status);
}
`;

/** A wrong input without the directive: must be exactly one compile error, on its line. */
const WRONG = `import { createClient } from '@longrun/client';
import type { LongrunJobTypes } from './src/longrun-types.js';

const lr = createClient<LongrunJobTypes>({ baseUrl: 'http://localhost:3000', apiKey: 'k' });
export const wrong = lr.submit('sleep', { ms: 'soon' });
`;

let packed: string[];
beforeAll(async () => {
  const { stdout } = await run(process.execPath, [
    join(root, 'scripts/pack-sdk.mjs'),
    join(tmp, 'packs'),
  ]);
  packed = stdout.trim().split('\n');
  const tarball = (name: string) => {
    const found = packed.find((p) => new RegExp(`[/\\\\]longrun-${name}-[^/\\\\]+\\.tgz$`).test(p));
    if (!found) throw new Error(`pack-sdk.mjs packed no @longrun/${name}:\n${stdout}`);
    return `file:${found}`;
  };

  mkdirSync(join(app, 'src'), { recursive: true });
  const rootPkg = readJson(join(root, 'package.json'));
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'longrun-client-consumer',
      version: '1.0.0',
      private: true,
      type: 'module',
      // The client's own dependency on @longrun/core resolves to this tarball (same version),
      // as it would to the registry's copy once published.
      dependencies: { '@longrun/client': tarball('client'), '@longrun/core': tarball('core') },
      devDependencies: { '@types/node': rootPkg.devDependencies['@types/node'] },
    }),
  );
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: app,
    env: cleanEnv(),
    timeout: 240_000,
  });

  const api = await startApp('api', {
    REDIS_URL: inject('redisUrl'),
    LONGRUN_PREFIX: prefix,
    LONGRUN_API_KEYS: API_KEYS,
    PORT: '0',
    HOST: '127.0.0.1',
  });
  stops.push(() => api.stop());
  const worker = await startWorker(prefix);
  stops.push(() => worker.stop());
  apiUrl = `http://127.0.0.1:${api.ready.port as number}`;

  // The type map, as the README says to make it.
  await run(
    process.execPath,
    [CLI, 'types', '--typescript', '--out', join(app, 'src/longrun-types.ts')],
    { cwd: app, env: cleanEnv({ LONGRUN_URL: apiUrl, LONGRUN_API_KEY: KEY_A }) },
  );
  writeFileSync(join(app, 'src/main.ts'), MAIN);
  writeFileSync(join(app, 'wrong.ts'), WRONG);
  writeFileSync(
    join(app, 'tsconfig.json'),
    tsconfig({ include: ['src'] }, { outDir: 'dist', rootDir: 'src' }),
  );
  writeFileSync(
    join(app, 'tsconfig.wrong.json'),
    tsconfig({ files: ['wrong.ts'] }, { noEmit: true }),
  );
  // A browser project: the DOM lib, no Node types at all.
  writeFileSync(join(app, 'browser.ts'), BROWSER);
  writeFileSync(
    join(app, 'tsconfig.browser.json'),
    tsconfig({ files: ['browser.ts'] }, { noEmit: true, types: [], lib: ['ES2022', 'DOM'] }),
  );
}, 300_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  rmSync(tmp, { recursive: true, force: true });
});

describe('@longrun/client installed from its tarball', { timeout: 120_000 }, () => {
  it('is packed by pack:sdk as a publishable package pinned to the core it was packed with', () => {
    expect(packed.map((p) => p.replace(/^.*[/\\]/, ''))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^longrun-client-.+\.tgz$/),
        expect.stringMatching(/^longrun-core-.+\.tgz$/),
      ]),
    );
    const client = readJson(join(app, 'node_modules/@longrun/client/package.json'));
    const core = readJson(join(app, 'node_modules/@longrun/core/package.json'));
    for (const pkg of [client, core]) {
      expect(pkg.private, pkg.name).toBeUndefined();
      expect(pkg).toMatchObject({
        license: 'MIT',
        type: 'module',
        sideEffects: false,
        engines: { node: expect.any(String) },
        repository: { type: 'git', url: expect.any(String), directory: expect.any(String) },
        exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
        publishConfig: { access: 'public' },
      });
      expect(pkg.description, pkg.name).toMatch(/\w/);
      expect(pkg.keywords, pkg.name).toContain('longrun');
    }
    expect(client.repository.directory).toBe('packages/client');
    expect(core.repository.directory).toBe('packages/core');
    // Exact, not a range: the client is tested against this core and no other.
    expect(client.dependencies['@longrun/core']).toBe(core.version);
    expect(client.version).toBe(readJson(join(root, 'packages/client/package.json')).version);
  });

  it('ships built code, declarations, README and LICENSE only: no sources, no tests', () => {
    const license = readFileSync(join(root, 'LICENSE'), 'utf8');
    for (const name of ['client', 'core']) {
      const dir = join(app, 'node_modules/@longrun', name);
      const files = filesUnder(dir);
      expect(files, name).toContain('dist/index.js');
      expect(files, name).toContain('dist/index.d.ts');
      const sources = files.filter((f) => /\.[cm]?tsx?$/.test(f) && !/\.d\.[cm]?ts$/.test(f));
      expect(sources, name).toEqual([]);
      expect(
        files.filter((f) => /(^|\/)(src|tests?)\/|\.(test|spec)\.|tsconfig/.test(f)),
        name,
      ).toEqual([]);
      expect(readFileSync(join(dir, 'LICENSE'), 'utf8'), name).toBe(license);
    }
    const readme = readFileSync(join(app, 'node_modules/@longrun/client/README.md'), 'utf8');
    expect(readme).toMatch(/npm install @longrun\/client/);
    expect(readme).toMatch(/longrun types --typescript/);
  });

  it('compiles a strict consumer whose typed submits reject wrong inputs', async () => {
    const types = readFileSync(join(app, 'src/longrun-types.ts'), 'utf8');
    expect(types).toContain('"sleep": { input: SleepInput };');
    const [good, wrong] = await Promise.all([
      outcome(TSC, ['--strict', '--pretty', 'false', '-p', 'tsconfig.json'], app),
      outcome(TSC, ['--strict', '--pretty', 'false', '-p', 'tsconfig.wrong.json'], app),
    ]);
    expect(good.code, good.output).toBe(0);
    expect(good.output.trim()).toBe('');
    expect(wrong.code, wrong.output).not.toBe(0);
    const errors = wrong.output.split('\n').filter((l) => /error TS\d+/.test(l));
    expect(errors, wrong.output).toHaveLength(1);
    expect(errors[0]).toMatch(/^wrong\.ts\(5,\d+\): error TS2322: .*'string'.*'number'/);
  });

  it('compiles in a browser project without Node types (the declarations need none)', async () => {
    const browser = await outcome(
      TSC,
      ['--strict', '--pretty', 'false', '-p', 'tsconfig.browser.json'],
      app,
    );
    expect(browser.code, browser.output).toBe(0);
  });

  it('runs with node against a real API: submit, wait, answer, cancel, errors', async () => {
    const { stdout } = await run(process.execPath, ['dist/main.js'], {
      cwd: app,
      env: cleanEnv({ LONGRUN_URL: apiUrl, LONGRUN_API_KEY: KEY_A }),
      timeout: 60_000,
    });
    const printed = JSON.parse(stdout.trim()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the consumer's output
    expect(printed).toMatchObject({
      status: 'completed',
      terminal: true,
      result: { greeting: 'from the packed client', n: 3 },
      question: { status: 'input_required', message: 'Ship release 42?' },
      answered: { status: 'completed', result: { approved: true, comment: 'go' } },
      cancelled: { status: 'cancelled' },
      refused: { status: 422, code: expect.stringMatching(/\w/), paths: ['input.ms'] },
    });
    // The API holds what the consumer saw.
    const http = httpClient(apiUrl, KEY_A);
    const echo = await http('GET', `/v1/jobs/${printed.taskId as string}/result`);
    expect(echo.body).toMatchObject({
      status: 'completed',
      result: { greeting: 'from the packed client', n: 3 },
    });
    const slow = await http('GET', `/v1/jobs/${printed.cancelled.taskId as string}`);
    expect(slow.body.status).toBe('cancelled');
  });
});
