import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobTypeInfo } from '@longrun/client';
import { z } from 'zod';
import { createCatalog } from '@longrun/core';
import { describeJobType, JobTypeRegistry } from '@longrun/engine';
import { defineJobType } from '@longrun/worker';
import { catalog, sleepJob } from '@longrun/worker-app';
import { KEY_A, startInProcessApi, type InProcessApi } from './helpers/service.js';
import { CLOSED_URL } from './helpers/closed-port.js';

// `longrun types` against a real API (stock types registered as a worker registers them), and
// the module `--typescript` writes compiled by the real tsc in a project of its own.

const ROOT = resolve(import.meta.dirname, '..');
const CLI = join(ROOT, 'apps/cli/dist/main.js');
const TSC = join(ROOT, 'node_modules/.bin/tsc');
const CLIENT = join(ROOT, 'packages/client/dist/index.js');

let api: InProcessApi;
let dir: string;
beforeAll(async () => {
  api = await startInProcessApi();
  // A type whose only worker is gone: registered with a heartbeat that lapses at once.
  const idle = { ...describeJobType(sleepJob), name: 'idle' };
  await new JobTypeRegistry(api.parts.jobs.redis, api.prefix).publish('gone', [idle], 1);
  dir = mkdtempSync(join(tmpdir(), 'longrun-cli-types-'));
});
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await api?.close();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a user would, against the test API unless `env` says otherwise. */
function longrun(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  const merged = { ...process.env, LONGRUN_URL: api.url, LONGRUN_API_KEY: KEY_A, ...env };
  const clean = Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined));
  const child = spawn(process.execPath, [CLI, ...args], { env: clean, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end();
  return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
}
const show = (run: Run) => `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;

/** `tsc --strict --noEmit` on `files` in a project of their own (ESM, as a user's would be). */
async function typecheck(name: string, files: string[]): Promise<{ ok: boolean; output: string }> {
  const config = join(dir, `tsconfig.${name}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023', 'DOM'],
        types: [],
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        verbatimModuleSyntax: true,
        skipLibCheck: true,
      },
      files,
    }),
  );
  try {
    const { stdout } = await promisify(execFile)(
      TSC,
      ['--strict', '--noEmit', '--pretty', 'false', '-p', config],
      { cwd: dir },
    );
    return { ok: true, output: stdout };
  } catch (error) {
    const { stdout, stderr } = error as { stdout: string; stderr: string };
    return { ok: false, output: `${stdout}${stderr}` };
  }
}

describe('longrun types', { timeout: 60_000 }, () => {
  it('lists the registered types as a table, marking a type no worker serves', async () => {
    const run = await longrun(['types']);
    expect(run.code, show(run)).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+VERSION\s+QUEUE\s+WORKERS\s+ATTEMPTS$/);
    const sleep = lines.find((l) => l.startsWith('sleep '));
    expect(sleep, run.stdout).toMatch(/^sleep\s+[0-9a-f]{16}\s+tasks-slow\s+1\s+1$/);
    expect(lines.find((l) => l.startsWith('idle '))).toMatch(/\s0 \(tasks wait\)\s+1$/);
    const names = lines.slice(1).map((l) => l.split(/\s+/)[0]);
    expect(names).toEqual([...catalog.keys(), 'idle'].sort());
  });

  it('--json prints the API body', async () => {
    const run = await longrun(['types', '--json']);
    expect(run.code, show(run)).toBe(0);
    const body = JSON.parse(run.stdout) as { jobTypes: JobTypeInfo[] };
    const sleep = body.jobTypes.find((t) => t.name === 'sleep');
    expect(sleep).toMatchObject({
      queue: 'tasks-slow',
      attempts: 1,
      workers: 1,
      inputSchema: { type: 'object', required: ['ms'], properties: { ms: { type: 'integer' } } },
    });
    expect(sleep!.versions[0]).toMatchObject({ version: sleep!.version, workers: 1 });
    expect(body.jobTypes.find((t) => t.name === 'idle')).toMatchObject({ workers: 0 });
  });

  it('refuses bad command lines and reports API errors (exit 4)', async () => {
    const cases: [string[], RegExp][] = [
      [['types', '--out', 'x.ts'], /--out only applies with --typescript/],
      [['types', '--typescript', '--json'], /--json and --typescript/],
      [['types', 'sleep'], /Usage: longrun types no arguments/],
      [['list', '--typescript'], /list does not take --typescript/],
    ];
    const runs = await Promise.all(cases.map(([args]) => longrun(args)));
    cases.forEach(([args, message], i) => {
      expect(runs[i]!.code, `${args.join(' ')}: ${show(runs[i]!)}`).toBe(4);
      expect(runs[i]!.stderr, args.join(' ')).toMatch(message);
    });

    const denied = await longrun(['types', '--typescript', '--api-key', 'wrong-key-0123456789']);
    expect(denied.code, show(denied)).toBe(4);
    expect(denied.stderr).toMatch(/Unauthorized/);
    expect(denied.stdout).toBe('');

    const down = await longrun(['types'], { LONGRUN_URL: CLOSED_URL });
    expect(down.code, show(down)).toBe(4);
    expect(down.stderr).toMatch(/ECONNREFUSED/);

    // A folder is made as needed (next test), but not inside a file.
    writeFileSync(join(dir, 'a-file'), '');
    const nowhere = await longrun(['types', '--typescript', '--out', join(dir, 'a-file/dir.ts')]);
    expect(nowhere.code, show(nowhere)).toBe(4);
    expect(nowhere.stderr).toMatch(/Cannot write .*a-file\/dir\.ts/);
  });

  it('--typescript --out writes a module that types submits in a strict project', async () => {
    const out = join(dir, 'longrun-types.ts');
    const run = await longrun(['types', '--typescript', '--out', out], {
      LONGRUN_URL: `${api.url}/`,
    });
    expect(run.code, show(run)).toBe(0);
    expect(run.stdout).toBe(`wrote ${catalog.size + 1} job types to ${out}\n`);
    const code = readFileSync(out, 'utf8');
    expect(code.split('\n')[0]).toMatch(
      /^\/\/ Generated by `longrun types --typescript` from http:\/\/127\.0\.0\.1:\d+ on \d{4}-\d\d-\d\dT[\d:.]+Z\. Do not edit\.$/,
    );
    expect(code).toMatch(/^export type SleepInput = \{\n {2}ms: number;\n\};$/m);
    expect(code).toContain('"sleep": { input: SleepInput };');
    expect(code).not.toMatch(/\binterface\b/);

    // Into a folder that is not there yet: made, as code generators do.
    const nested = join(dir, 'src', 'generated', 'longrun.ts');
    const made = await longrun(['types', '--typescript', '--out', nested], {
      LONGRUN_URL: api.url,
    });
    expect(made.code, show(made)).toBe(0);
    expect(readFileSync(nested, 'utf8').split('\n').slice(1)).toEqual(code.split('\n').slice(1));

    // Without --out the same module goes to stdout.
    const printed = await longrun(['types', '--typescript']);
    expect(printed.code, show(printed)).toBe(0);
    expect(printed.stdout.split('\n').slice(1)).toEqual(code.split('\n').slice(1));

    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
    const client = relative(dir, CLIENT).replaceAll('\\', '/');
    writeFileSync(
      join(dir, 'consumer.ts'),
      [
        `import { createClient, type JobInput, type JobResult } from '${client}';`,
        "import type { LongrunJobTypes, SleepInput } from './longrun-types.js';",
        '',
        "const lr = createClient<LongrunJobTypes>({ baseUrl: 'http://localhost:3000', apiKey: 'k' });",
        'export async function go(): Promise<unknown> {',
        "  const { taskId } = await lr.submit('sleep', { ms: 5000 });",
        "  await lr.submit('echo', { anything: [1, 2] });",
        "  await lr.submit('flaky', { failTimes: 1 });",
        "  await lr.submit('approval', { question: 'Ship?' }, { ttlMs: 60_000 });",
        '  // @ts-expect-error not a registered job type',
        "  await lr.submit('resize', {});",
        '  // @ts-expect-error sleep needs ms',
        "  await lr.submit('sleep', {});",
        '  // @ts-expect-error sleep takes nothing else',
        "  await lr.submit('sleep', { ms: 1, extra: true });",
        "  const input: JobInput<LongrunJobTypes, 'sleep'> = { ms: 1 };",
        '  const same: SleepInput = input;',
        "  const result: JobResult<LongrunJobTypes, 'sleep'> = (await lr.wait(taskId)).result;",
        '  return [same, result];',
        '}',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'consumer-bad.ts'),
      [
        `import { createClient } from '${client}';`,
        "import type { LongrunJobTypes } from './longrun-types.js';",
        '',
        "const lr = createClient<LongrunJobTypes>({ baseUrl: 'http://localhost:3000', apiKey: 'k' });",
        "export const bad = lr.submit('sleep', { ms: 'soon' });",
        '',
      ].join('\n'),
    );
    const [good, bad] = await Promise.all([
      typecheck('good', ['longrun-types.ts', 'consumer.ts']),
      typecheck('bad', ['longrun-types.ts', 'consumer-bad.ts']),
    ]);
    expect(good.ok, good.output).toBe(true);
    expect(bad.ok, bad.output).toBe(false);
    expect(bad.output).toMatch(/consumer-bad\.ts\(5,\d+\): error TS\d+/);
    expect(bad.output).toMatch(/'string' is not assignable to type 'number'|\bms\b/);
    // The only error is the wrong input: the generated module itself compiles.
    expect(
      bad.output
        .trim()
        .split('\n')
        .filter((l) => /error TS/.test(l)),
    ).toHaveLength(1);
  });
  // Issue 27 item 8: `z.array(…).max(20)` was typed as a union of 20 tuples, so an ordinary
  // `string[]` did not type-check against the generated input.
  it('--typescript types a bounded array as T[]: an ordinary string[] type-checks', async () => {
    const tagged = defineJobType({
      name: 'tagged',
      input: z.strictObject({ tags: z.array(z.string()).min(1).max(20) }),
      handler: ({ tags }) => ({ count: tags.length }),
    });
    const own = await startInProcessApi({ register: createCatalog([tagged]) });
    try {
      const out = join(dir, 'tagged-types.ts');
      const run = await longrun(['types', '--typescript', '--out', out], { LONGRUN_URL: own.url });
      expect(run.code, show(run)).toBe(0);
      expect(readFileSync(out, 'utf8')).toMatch(/^ {2}tags: string\[\];$/m);
      writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
      const client = relative(dir, CLIENT).replaceAll('\\', '/');
      writeFileSync(
        join(dir, 'tagged.ts'),
        [
          `import { createClient } from '${client}';`,
          "import type { LongrunJobTypes, TaggedInput } from './tagged-types.js';",
          '',
          "const lr = createClient<LongrunJobTypes>({ baseUrl: 'http://localhost:3000', apiKey: 'k' });",
          'export function tag(tags: string[]): Promise<unknown> {',
          '  const input: TaggedInput = { tags };',
          "  return lr.submit('tagged', input);",
          '}',
          '',
        ].join('\n'),
      );
      const checked = await typecheck('tagged', ['tagged-types.ts', 'tagged.ts']);
      expect(checked.ok, checked.output).toBe(true);
    } finally {
      await own.close();
    }
  });
});
