import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
// @ts-expect-error plain ESM helper shared with `npm start`
import { freePort } from '../../scripts/redis.mjs';

const root = resolve(import.meta.dirname, '../..');

/**
 * The runtime the apps run on in process-level tests: this Node, or with
 * `LONGRUN_TEST_RUNTIME=bun` the pinned Bun of tools/bun (the same tests, the other runtime).
 */
export const APP_RUNTIME =
  process.env.LONGRUN_TEST_RUNTIME === 'bun'
    ? resolve(root, 'tools/bun/node_modules/.bin/bun')
    : process.execPath;

/** How to run a script: another Node binary than this one's, arguments after the script. */
export interface SpawnOptions {
  /** The Node binary (default: the one running the tests, `process.execPath`). */
  node?: string;
  args?: string[];
}

/**
 * The one way the tests start a built app (`apps/<app>/dist/main.js`) as a child process: its env
 * over this process's, every output line collected.
 */
export function spawnApp(
  app: 'api' | 'worker',
  env: Record<string, string>,
  opts: SpawnOptions = {},
): { child: ChildProcess; lines: string[]; exited: Promise<number | null> } {
  return spawnScript(resolve(root, `apps/${app}/dist/main.js`), env, root, opts);
}

/** Starts `node <script>` in `cwd`, its env over this process's, every output line collected. */
export function spawnScript(
  script: string,
  env: Record<string, string>,
  cwd: string,
  opts: SpawnOptions = {},
): { child: ChildProcess; lines: string[]; exited: Promise<number | null> } {
  const child = spawn(opts.node ?? APP_RUNTIME, [script, ...(opts.args ?? [])], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => lines.push(line));
  }
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, lines, exited };
}

export interface Proc {
  child: ChildProcess;
  /** Every log line printed so far (stdout and stderr). */
  lines: string[];
  /** The JSON log line that announced readiness. */
  ready: Record<string, unknown>;
  /** SIGTERM, then wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL, then wait for exit. */
  kill(): Promise<void>;
}

/**
 * Starts a built app (`api` or `worker`) and waits for its "<name> ready" log line; `opts.node`
 * runs it on another Node binary.
 */
export async function startApp(
  app: 'api' | 'worker',
  env: Record<string, string>,
  timeoutMs = 15_000,
  opts: SpawnOptions = {},
): Promise<Proc> {
  return untilReady(spawnApp(app, { LOG_LEVEL: 'info', ...env }, opts), app, timeoutMs);
}

/** Starts `node <script>` (e.g. a worker built outside the workspaces) until "<app> ready". */
export async function startScript(
  script: string,
  env: Record<string, string>,
  opts: { cwd: string; app?: string; timeoutMs?: number } & SpawnOptions,
): Promise<Proc> {
  const spawned = spawnScript(script, { LOG_LEVEL: 'info', ...env }, opts.cwd, opts);
  return untilReady(spawned, opts.app ?? 'worker', opts.timeoutMs ?? 15_000);
}

async function untilReady(
  { child, lines, exited }: ReturnType<typeof spawnScript>,
  app: string,
  timeoutMs: number,
): Promise<Proc> {
  const ready = await new Promise<Record<string, unknown>>((resolveReady, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${app} not ready in ${timeoutMs} ms:\n${lines.join('\n')}`)),
      timeoutMs,
    );
    const check = setInterval(() => {
      const line = lines.find((l) => l.includes(`"msg":"${app} ready"`));
      if (!line) return;
      clearTimeout(timer);
      clearInterval(check);
      resolveReady(JSON.parse(line) as Record<string, unknown>);
    }, 20);
    void exited.then((code) => {
      clearTimeout(timer);
      clearInterval(check);
      reject(new Error(`${app} exited with ${code} before ready:\n${lines.join('\n')}`));
    });
  });
  return {
    child,
    lines,
    ready,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Runs an app to completion (e.g. to check a start-up failure); resolves with code and output. */
export function runApp(
  app: 'api' | 'worker',
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolveRun) => {
    const child = spawn(APP_RUNTIME, [resolve(root, `apps/${app}/dist/main.js`)], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolveRun({ code, output });
    });
  });
}

export interface ApiProcess {
  child: ChildProcess;
  url: string;
  port: number;
  /** stdout and stderr lines so far. */
  lines: string[];
  /** SIGTERM, then wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  kill(): Promise<void>;
  exited: Promise<number | null>;
}

/**
 * The built API (`apps/api/dist/main.js`) as a child process on a free port of 127.0.0.1, ready
 * once `/healthz` answers. Unlike `startApp` it does not wait for the info-level "api ready" line,
 * so the API can run at LOG_LEVEL=warn (no per-request log lines) under load.
 */
export async function startApiProcess(
  cleanups: { add(fn: () => unknown): void },
  env: Record<string, string>,
  opts: { port?: number; node?: string } = {},
): Promise<ApiProcess> {
  const port: number = opts.port ?? ((await freePort()) as number);
  const { child, lines, exited } = spawnApp(
    'api',
    {
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      // The suite measures the service, not its abuse limits: off unless a scenario sets them.
      LONGRUN_RATE_LIMIT_RPS: '0',
      LONGRUN_MAX_OPEN_TASKS: '0',
      ...env,
      PORT: String(port),
    },
    opts.node ? { node: opts.node } : {},
  );
  const api: ApiProcess = {
    child,
    url: `http://127.0.0.1:${port}`,
    port,
    lines,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  cleanups.add(() => api.kill());
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`api exited early:\n${lines.join('\n')}`);
    const up = await fetch(`${api.url}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) return api;
    if (Date.now() > deadline) throw new Error(`api not up in 20 s:\n${lines.join('\n')}`);
    await sleep(100);
  }
}
