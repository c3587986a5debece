/**
 * docker-compose.yml, .env.example and the image's Dockerfile against the code, without Docker:
 * - `.env.example` lists every setting the apps' config schemas read (parsed from their source:
 *   apps/api/src/config.ts, packages/worker/src/env.ts and the shared shape in packages/core)
 *   and every row of the README's Configuration table, each once, with a one-line comment, and
 *   nothing else but the variables docker-compose.yml uses;
 * - each value there is the code's default (asked of the real config loaders), or empty where
 *   the code has none, the API and the worker differ, or compose picks its own;
 * - each active setting reaches every service whose app reads it (from .env or the shell), the
 *   commented-out ones are fixed by compose, and no service gets a setting its app does not read;
 * - nothing is required: compose starts with no .env; Redis and the API publish on loopback;
 * - the Dockerfile copies every workspace's manifest before `npm ci` (else the image's build
 *   fails), and carries what the api service's command needs;
 * - the first try as compose runs it, minus Docker: the api service's command and environment,
 *   with no .env, make a key, keep it across a restart and never print it; the worker service's
 *   command completes a task with it;
 * - with Docker's compose plugin installed, `docker compose config` agrees with all of the above.
 */
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '@longrun/api';
import { loadWorkerEnv } from '@longrun/worker';
import { httpClient, waitFor } from './helpers/http.js';
import { startScript, type Proc } from './helpers/processes.js';
import { uniquePrefix } from './helpers/service.js';
// @ts-expect-error plain ESM helper shared with `npm start`
import { freePort } from '../scripts/redis.mjs';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed YAML/JSON documents
type Doc = any;
type Service = 'api' | 'worker';

const root = resolve(import.meta.dirname, '..');
const at = (...parts: string[]) => resolve(root, ...parts);
const read = (path: string) => readFileSync(at(path), 'utf8');
const run = promisify(execFile);

// ---- what the code reads ------------------------------------------------------------------------

/** Keys of the zod object literals in a config source file (`  NAME: z…` lines). */
function schemaKeys(path: string): string[] {
  return [...read(path).matchAll(/^\s+([A-Z][A-Z0-9_]+):\s/gm)].map((m) => m[1]!);
}
const sharedKeys = schemaKeys('packages/core/src/env.ts');
/** The variables each app's config schema reads. */
const reads: Record<Service, Set<string>> = {
  // And the OpenTelemetry settings each app's tracing module takes (`OTEL_SETTINGS`).
  api: new Set([
    ...sharedKeys,
    ...schemaKeys('apps/api/src/config.ts'),
    ...schemaKeys('apps/api/src/tracing.ts'),
  ]),
  worker: new Set([
    ...sharedKeys,
    ...schemaKeys('packages/worker/src/env.ts'),
    ...schemaKeys('apps/worker/src/tracing.ts'),
  ]),
};
const appVars = new Set([...reads.api, ...reads.worker]);
const readersOf = (name: string) => (['api', 'worker'] as const).filter((s) => reads[s].has(name));
/** Each app's real config loader: what a value (or its absence) becomes. */
const load: Record<Service, (env: Record<string, string>) => Record<string, unknown>> = {
  api: (env) => loadConfig(env),
  worker: (env) => loadWorkerEnv(env),
};

// ---- .env.example -------------------------------------------------------------------------------

interface Entry {
  name: string;
  value: string;
  /** false: the line is commented out (`# NAME=value`). */
  active: boolean;
  /** The comment line right above it, or ''. */
  comment: string;
}

/** `NAME=value` and `# NAME=value` lines, each with the comment line above it. */
function parseEnvExample(text: string): Entry[] {
  const lines = text.split('\n');
  const isEntry = (line: string) => /^(#\s*)?[A-Z][A-Z0-9_]*=/.test(line);
  return lines.flatMap((line, i) => {
    const m = /^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!m) return [];
    const above = lines[i - 1] ?? '';
    const comment = /^#\s*\S/.test(above) && !isEntry(above) ? above : '';
    return [{ name: m[2]!, value: m[3]!, active: !m[1], comment }];
  });
}
const entries = parseEnvExample(read('.env.example'));
const entry = new Map(entries.map((e) => [e.name, e]));

// ---- docker-compose.yml -------------------------------------------------------------------------

/** Compose's `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}` and `$$`. */
function interpolate(value: unknown, env: Record<string, string>): unknown {
  if (typeof value === 'string') {
    return value.replace(
      /\$\$|\$\{(\w+)(?:(:?)([-?])([^}]*))?\}/g,
      (whole, name: string | undefined, colon: string, kind: string, arg: string) => {
        if (whole === '$$') return '$';
        const set = env[name!];
        const missing = set === undefined || (colon === ':' && set === '');
        if (!missing) return set;
        if (kind === '-') return arg;
        if (kind === '?') throw new Error(`${name}: ${arg}`);
        return '';
      },
    );
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)]));
  }
  return value;
}

/** Every string in a parsed document (values, not comments). */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

const raw: Doc = parse(read('docker-compose.yml'), { merge: true });
/** docker-compose.yml as compose reads it with this environment (and no .env). */
const composeWith = (env: Record<string, string>): Doc => interpolate(raw, env);
/** The environment compose gives a service, every value a string (as the process sees it). */
const serviceEnv = (compose: Doc, service: Service): Record<string, string> =>
  Object.fromEntries(
    Object.entries(compose.services[service].environment ?? {}).map(([k, v]) => [
      k,
      v === null ? '' : String(v),
    ]),
  );
/** Each `${NAME…}` compose interpolates, with the defaults it gives it. */
const composeRefs = new Map<string, Set<string>>();
for (const s of strings(raw)) {
  for (const m of s.matchAll(/\$\{(\w+)(?::?-([^}]*))?\}/g)) {
    const defaults = composeRefs.get(m[1]!) ?? new Set<string>();
    defaults.add(m[2] ?? '');
    composeRefs.set(m[1]!, defaults);
  }
}

const SENTINEL = 'sentinel-0123456789';

// ---- README -------------------------------------------------------------------------------------

/** The variables in the first column of the README's Configuration table. */
function readmeConfigVars(): string[] {
  const readme = read('README.md');
  const start = readme.indexOf('\n## Configuration');
  const end = readme.indexOf('\n## ', start + 1);
  const rows = readme
    .slice(start, end === -1 ? undefined : end)
    .split('\n')
    .filter((l) => l.startsWith('| `'));
  return rows.flatMap((row) =>
    [...row.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!),
  );
}

// ---- the tests ----------------------------------------------------------------------------------

describe('.env.example', () => {
  it('the schema parser finds what the loaders return (so the lists below are complete)', () => {
    for (const service of ['api', 'worker'] as const) {
      const withDefaults = Object.keys(load[service]({}));
      expect(withDefaults.length, service).toBeGreaterThan(10);
      // Every key a loader returns for an empty environment is one the parser found.
      expect([...reads[service]], service).toEqual(expect.arrayContaining(withDefaults));
    }
    expect([...reads.api]).toEqual(
      expect.arrayContaining(['LONGRUN_API_KEYS', 'HOST', 'REDIS_URL', 'LONGRUN_ADMIN_KEYS']),
    );
    expect([...reads.worker]).toEqual(
      expect.arrayContaining(['LONGRUN_WORKER_TYPES', 'LONGRUN_LOCK_DURATION_MS', 'REDIS_URL']),
    );
    expect(reads.worker.has('LONGRUN_API_KEYS')).toBe(false);
  });

  it('lists every setting the apps read and every README Configuration row, once, each with a comment', () => {
    const documented = readmeConfigVars();
    expect(documented.length).toBeGreaterThan(15);
    const listed = entries.map((e) => e.name);
    expect(new Set(listed).size, 'a variable listed twice').toBe(listed.length);
    const missing = [...new Set([...appVars, ...documented])].filter((v) => !entry.has(v));
    expect(missing).toEqual([]);
    const uncommented = entries.filter((e) => !e.comment).map((e) => e.name);
    expect(uncommented, 'entries without a comment line right above').toEqual([]);
  });

  it('lists nothing else: each line is a setting an app reads or a variable compose uses', () => {
    const stray = entries.filter((e) => !appVars.has(e.name) && !composeRefs.has(e.name));
    expect(stray.map((e) => e.name)).toEqual([]);
  });

  it("each value is the code's default (empty: none, the two apps differ, or compose picks its own)", () => {
    const problems: string[] = [];
    for (const e of entries.filter((x) => appVars.has(x.name))) {
      const readers = readersOf(e.name);
      const defaults = readers.map((s) => load[s]({})[e.name]);
      const agree = defaults.every((d) => isDeepStrictEqual(d, defaults[0]));
      const empty = (d: unknown) =>
        d === undefined ||
        d === '' ||
        (Array.isArray(d) && d.length === 0) ||
        (d instanceof Map && d.size === 0);
      const composeDefault = composeRefs.get(e.name);
      const composePicks = [...(composeDefault ?? [])].some((d) => d !== '');
      if (e.value === '') {
        if (!empty(defaults[0]) && agree && !composePicks) {
          problems.push(`${e.name}= hides the default ${String(defaults[0])}`);
        }
        continue;
      }
      if (composePicks && e.active) {
        problems.push(`${e.name}=${e.value} in .env would override compose's own default`);
      }
      for (const s of readers) {
        const parsed = load[s]({ [e.name]: e.value })[e.name];
        if (parsed === undefined)
          problems.push(`the ${s}'s loader ignores ${e.name} (stale dist?)`);
        else if (!isDeepStrictEqual(parsed, load[s]({})[e.name])) {
          problems.push(`${e.name}=${e.value}, but the ${s}'s default is ${String(defaults[0])}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("docker compose's own variables: each listed, with compose's one default", () => {
    const problems: string[] = [];
    for (const [name, defaults] of composeRefs) {
      if (appVars.has(name)) continue;
      const e = entry.get(name);
      if (defaults.size !== 1) problems.push(`${name} has several defaults: ${[...defaults]}`);
      else if (!e?.active) problems.push(`${name} is not an active line of .env.example`);
      else if (e.value !== [...defaults][0]) {
        problems.push(`${name}=${e.value}, but compose defaults to ${[...defaults][0]}`);
      }
    }
    expect(problems).toEqual([]);
    expect(composeRefs.has('LONGRUN_REDIS_PORT')).toBe(true);
  });
});

describe('docker-compose.yml', () => {
  /** Read lazily: with a required variable it throws, which the first test reports. */
  const bare = () => composeWith({});

  it('needs nothing: no .env, no exported variable', () => {
    expect(strings(raw).filter((s) => /\$\{\w+:?\?/.test(s))).toEqual([]);
    expect(bare).not.toThrow();
    const compose = bare();
    // Where compose must decide, it does: the network's Redis, production, fixed ports.
    expect(serviceEnv(compose, 'api')).toMatchObject({
      NODE_ENV: 'production',
      REDIS_URL: 'redis://redis:6379',
      HOST: '0.0.0.0',
      PORT: '3000',
    });
    expect(serviceEnv(compose, 'worker')).toMatchObject({
      NODE_ENV: 'production',
      REDIS_URL: 'redis://redis:6379',
      LONGRUN_METRICS_PORT: '9464',
    });
  });

  it('each active setting reaches every service that reads it; commented ones are fixed', () => {
    const problems: string[] = [];
    for (const e of entries.filter((x) => appVars.has(x.name))) {
      const composed = composeWith({ [e.name]: SENTINEL });
      for (const s of readersOf(e.name)) {
        const got = serviceEnv(composed, s)[e.name];
        if (e.active && got !== SENTINEL) problems.push(`${s} does not receive ${e.name}`);
        if (!e.active && got === SENTINEL) {
          problems.push(`${e.name} is commented out in .env.example, but ${s} takes it from .env`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('no service gets a setting its app does not read (a typo would be silently ignored)', () => {
    for (const s of ['api', 'worker'] as const) {
      const stray = Object.keys(serviceEnv(bare(), s)).filter((k) => !reads[s].has(k));
      expect(stray, s).toEqual([]);
    }
  });

  it('Redis and the API publish on 127.0.0.1 only, unless told otherwise', () => {
    expect(raw.services.redis.ports).toEqual([
      '${LONGRUN_REDIS_BIND:-127.0.0.1}:${LONGRUN_REDIS_PORT:-6379}:6379',
    ]);
    const compose = bare();
    expect(compose.services.redis.ports).toEqual(['127.0.0.1:6379:6379']);
    expect(compose.services.api.ports).toEqual(['127.0.0.1:3000:3000']);
    for (const [name, service] of Object.entries(compose.services as Record<string, Doc>)) {
      for (const port of (service.ports ?? []) as string[]) {
        expect(port, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
      }
    }
    const moved = composeWith({ LONGRUN_REDIS_PORT: '6380', LONGRUN_API_BIND: '0.0.0.0' });
    expect(moved.services.redis.ports).toEqual(['127.0.0.1:6380:6379']);
    expect(moved.services.api.ports).toEqual(['0.0.0.0:3000:3000']);
  });

  it("the api service's key lives in a named volume the image prepares for the node user", () => {
    const api = bare().services.api;
    const [node, script, keyFile] = api.command as string[];
    expect(node).toBe('node');
    const mount = (api.volumes as string[])
      .map((v) => v.split(':'))
      .find(([, target]) => target === dirname(keyFile!));
    expect(mount, `a volume at ${dirname(keyFile!)}`).toBeDefined();
    expect(Object.keys(raw.volumes)).toContain(mount![0]);
    const runtime = read('Dockerfile')
      .split(/^FROM /m)
      .find((s) => / AS runtime\b/.test(s))!;
    expect(runtime).toContain(`\nCOPY ${script} ${posix.dirname(script!)}/\n`);
    const prepare = runtime.indexOf(`mkdir -p ${mount![1]} && chown node:node ${mount![1]}`);
    expect(prepare).toBeGreaterThan(-1);
    expect(prepare).toBeLessThan(runtime.indexOf('\nUSER node'));
  });
});

describe('Dockerfile', () => {
  it("copies every workspace's package.json before npm ci, in every stage that runs it", () => {
    const lock = JSON.parse(read('package-lock.json'));
    const workspaces = Object.keys(lock.packages)
      .filter((k) => k !== '' && !k.includes('node_modules'))
      .sort();
    expect(workspaces).toEqual(expect.arrayContaining(['apps/api', 'apps/cli', 'packages/client']));
    const stages = read('Dockerfile')
      .split(/^FROM /m)
      .filter((s) => /^RUN .*npm ci/m.test(s));
    expect(stages.length).toBe(2);
    for (const stage of stages) {
      const beforeCi = stage.slice(0, stage.search(/^RUN .*npm ci/m));
      const copied = [...beforeCi.matchAll(/^COPY (\S+)\/package\.json \1\/$/gm)].map((m) => m[1]);
      expect(copied.sort(), stage.split('\n')[0]).toEqual(workspaces);
    }
  });
});

// ---- the first try, as compose runs it, on this host --------------------------------------------

describe('the first try, as compose runs it (no Docker: its commands and environment, here)', () => {
  /**
   * A service's command and environment from docker-compose.yml, run here: only what names the
   * compose network changes (Redis, listen addresses and ports, a prefix of its own), and paths
   * in its volumes map to `volumeDir`.
   */
  async function runService(
    service: Service,
    opts: { volumeDir: string; prefix: string; port: number; env?: Record<string, string> },
  ): Promise<Proc> {
    const compose = composeWith({});
    const spec = compose.services[service];
    const [node, script, ...args] = spec.command as string[];
    expect(node).toBe('node');
    const targets = ((spec.volumes ?? []) as string[]).map((v) => v.split(':')[1]!);
    const mapped = args.map((a) => {
      const target = targets.find((t) => a.startsWith(`${t}/`));
      return target ? join(opts.volumeDir, posix.relative(target, a)) : a;
    });
    const env = {
      ...serviceEnv(compose, service),
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: opts.prefix,
      HOST: '127.0.0.1',
      PORT: String(opts.port),
      LONGRUN_METRICS_HOST: '127.0.0.1',
      LONGRUN_METRICS_PORT: '0',
      ...opts.env,
    };
    return startScript(at(script!), env, { cwd: root, app: service, args: mapped });
  }

  it('no .env: the api makes a key, keeps it across a restart, never prints it; a task completes', async () => {
    const volumeDir = await mkdtemp(join(tmpdir(), 'longrun-api-keys-'));
    const opts = { volumeDir, prefix: uniquePrefix(), port: (await freePort()) as number };
    const procs: Proc[] = [];
    try {
      procs.push(await runService('api', opts), await runService('worker', opts));
      const keyFile = join(volumeDir, 'api-key');
      const key = await readFile(keyFile, 'utf8');
      expect(key).toMatch(/^local-[\w-]{32}$/);
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      const http = httpClient(`http://127.0.0.1:${opts.port}`, key);
      expect((await http('GET', '/v1/jobs', { key: null })).status).toBe(401);
      const submit = await http('POST', '/v1/jobs', {
        body: { type: 'echo', input: { hello: 'compose' } },
      });
      expect(submit.status, submit.text).toBe(202);
      const id = submit.body.taskId as string;
      const result = await waitFor(
        async () => {
          const r = await http('GET', `/v1/jobs/${id}/result`);
          return r.status === 200 && r.body;
        },
        { what: 'the echo task to complete' },
      );
      expect(result).toEqual({ taskId: id, status: 'completed', result: { hello: 'compose' } });

      // A restart (or a rebuilt container on the same volume) keeps the key.
      expect(await procs.shift()!.stop()).toBe(0);
      procs.push(await runService('api', opts));
      expect(await readFile(keyFile, 'utf8')).toBe(key);
      expect((await http('GET', `/v1/jobs/${id}`)).body.status).toBe('completed');

      const logs = procs.flatMap((p) => p.lines).join('\n');
      expect(logs).toContain(`docker compose exec -T api cat ${keyFile}`);
      expect(logs).not.toContain(key);
    } finally {
      for (const p of procs) await p.kill();
      await rm(volumeDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('LONGRUN_API_KEYS set: the key file is neither read nor written', async () => {
    const volumeDir = await mkdtemp(join(tmpdir(), 'longrun-api-keys-'));
    const opts = { volumeDir, prefix: uniquePrefix(), port: (await freePort()) as number };
    const stale = 'local-an-old-generated-key-000000';
    await writeFile(join(volumeDir, 'api-key'), stale, { mode: 0o600 });
    const mine = 'acme-0123456789abcdef';
    const api = await runService('api', { ...opts, env: { LONGRUN_API_KEYS: `acme:${mine}` } });
    try {
      const http = httpClient(`http://127.0.0.1:${opts.port}`);
      expect((await http('GET', '/v1/jobs', { key: mine })).status).toBe(200);
      expect((await http('GET', '/v1/jobs', { key: stale })).status).toBe(401);
      expect(await readdir(volumeDir)).toEqual(['api-key']);
      expect(await readFile(join(volumeDir, 'api-key'), 'utf8')).toBe(stale);
    } finally {
      expect(await api.stop()).toBe(0);
      await rm(volumeDir, { recursive: true, force: true });
    }
  });
});

// ---- the real thing, where it is installed ------------------------------------------------------

const hasCompose = spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0;

describe('docker compose config', () => {
  it.skipIf(!hasCompose)(
    'agrees: nothing required, every setting passed, ports on loopback',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'longrun-compose-'));
      // Only the variables this test gives: none of compose's or the apps' from this shell.
      const shell = Object.fromEntries(
        Object.entries(process.env).filter(
          ([k]) => !appVars.has(k) && !composeRefs.has(k) && k !== 'COMPOSE_FILE',
        ),
      ) as Record<string, string>;
      const config = async (dotenv: string): Promise<Doc> => {
        const envFile = join(dir, 'env');
        await writeFile(envFile, dotenv);
        const args = ['compose', '--env-file', envFile, '-f', at('docker-compose.yml')];
        const { stdout } = await run('docker', [...args, 'config', '--format', 'json'], {
          cwd: root,
          env: shell,
        });
        return JSON.parse(stdout);
      };
      try {
        const bare = await config('');
        for (const s of ['api', 'worker'] as const) {
          expect(bare.services[s].environment, s).toEqual(serviceEnv(composeWith({}), s));
        }
        const redisPort = bare.services.redis.ports[0];
        expect(redisPort).toMatchObject({ host_ip: '127.0.0.1', target: 6379 });
        expect(String(redisPort.published)).toBe('6379');
        expect(bare.services.api.ports[0]).toMatchObject({ host_ip: '127.0.0.1', target: 3000 });

        // The same .env that .env.example would become, with every active app setting set.
        const dotenv = entries
          .filter((e) => e.active && appVars.has(e.name))
          .map((e) => `${e.name}=${SENTINEL}`)
          .join('\n');
        const full = await config(dotenv);
        for (const e of entries.filter((x) => x.active && appVars.has(x.name))) {
          for (const s of readersOf(e.name)) {
            expect(full.services[s].environment[e.name], `${s} ${e.name}`).toBe(SENTINEL);
          }
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
