import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessApi, type InProcessApi } from './helpers/service.js';

// A client generated from the served document with openapi-typescript, as a team consuming the
// API would make one, compiled by the real tsc: the submit body must be checked per job type.

const ROOT = resolve(import.meta.dirname, '..');
const TSC = join(ROOT, 'node_modules/.bin/tsc');

/** Submit bodies: whether the generated types accept each one, and what the API answers. */
const CASES: { name: string; body: Record<string, unknown>; compiles: boolean; status: number }[] =
  [
    {
      name: 'sleep',
      body: { type: 'sleep', input: { ms: 1000 }, ttlMs: 60_000 },
      compiles: true,
      status: 202,
    },
    {
      name: 'sleepSoon',
      body: { type: 'sleep', input: { ms: 'soon' } },
      compiles: false,
      status: 422,
    },
    {
      name: 'sleepOther',
      body: { type: 'sleep', input: { seconds: 1 } },
      compiles: false,
      status: 422,
    },
    // The API reads a missing input as `{}`: fine for echo, never for sleep (`ms` is required).
    { name: 'echoNoInput', body: { type: 'echo', ttlMs: 60_000 }, compiles: true, status: 202 },
    { name: 'sleepNoInput', body: { type: 'sleep' }, compiles: false, status: 422 },
    // A field with a default may be left out (a generator reading `default` would require it).
    {
      name: 'flakyDefault',
      body: { type: 'flaky', input: { failTimes: 0 }, ttlMs: 60_000 },
      compiles: true,
      status: 202,
    },
    { name: 'unregistered', body: { type: 'resize', input: {} }, compiles: false, status: 400 },
    { name: 'ttl', body: { type: 'echo', input: {}, ttl: 60_000 }, compiles: false, status: 400 },
  ];

const HEADER = `import type { paths } from './api.js';

export type SubmitBody = paths['/v1/jobs']['post']['requestBody']['content']['application/json'];
`;

let api: InProcessApi;
let dir: string;
beforeAll(async () => {
  api = await startInProcessApi();
  dir = mkdtempSync(join(tmpdir(), 'longrun-openapi-client-'));
  const res = await api.http('GET', '/openapi.json', { key: null });
  expect(res.status).toBe(200);
  // The document as served (an object: openapi-typescript fetches nothing).
  writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(res.body, { silent: true })));
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
});
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await api?.close();
});

/** `tsc --strict --noEmit` on `file` and the generated `api.ts`, in a project of their own. */
async function typecheck(file: string, source: string): Promise<{ ok: boolean; output: string }> {
  writeFileSync(join(dir, file), source);
  const config = join(dir, `tsconfig.${file}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023'],
        types: [],
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        verbatimModuleSyntax: true,
      },
      files: [file],
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

describe(
  'a client generated from /openapi.json with openapi-typescript',
  { timeout: 60_000 },
  () => {
    it('type-checks each submit body against its job type, as the API checks it', async () => {
      const lines = CASES.map(({ name, body, compiles }) =>
        [
          // Fails the compile if the line is accepted: the union would have regressed.
          compiles ? '' : `// @ts-expect-error ${name} is refused by the API\n`,
          `export const ${name}: SubmitBody = ${JSON.stringify(body)};`,
        ].join(''),
      );
      const consumer = `${HEADER}
${lines.join('\n')}

// The variants are told apart by \`type\`: narrowing on it gives that type's input.
export function msOf(body: SubmitBody): number | undefined {
  return body.type === 'sleep' ? body.input.ms : undefined;
}

// \`input\` is optional where the API accepts it missing, required where it never can.
type Variant<T extends string> = Extract<SubmitBody, { type: T }>;
type Optional<O, K extends keyof O> = {} extends Pick<O, K> ? true : false;
export const echoInputOptional: Optional<Variant<'echo'>, 'input'> = true;
export const sleepInputRequired: Optional<Variant<'sleep'>, 'input'> = false;
`;
      const checked = await typecheck('consumer.ts', consumer);
      expect(checked.ok, `${checked.output}\n${consumer}`).toBe(true);

      // What compiles is what the API accepts, and the other way round.
      for (const { name, body, status } of CASES) {
        const res = await api.http('POST', '/v1/jobs', { body });
        expect(res.status, `${name}: ${res.text}`).toBe(status);
      }
    });

    it("refuses a sleep input whose ms is not a number, naming the field's type", async () => {
      const wrong = await typecheck(
        'wrong.ts',
        `${HEADER}
export const wrong: SubmitBody = { type: 'sleep', input: { ms: 'soon' } };
`,
      );
      expect(wrong.ok, wrong.output).toBe(false);
      expect(wrong.output).toMatch(/^wrong\.ts\(\d+,\d+\): error TS2322:/);
      expect(wrong.output).toContain("The types of 'input.ms' are incompatible");
      expect(wrong.output).toContain("Type 'string' is not assignable to type 'number'");
    });
  },
);
