import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

const root = resolve(import.meta.dirname, '../..');

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

/** Starts a built app (`api` or `worker`) and waits for its "<name> ready" log line. */
export async function startApp(
  app: 'api' | 'worker',
  env: Record<string, string>,
  timeoutMs = 15_000,
): Promise<Proc> {
  const child = spawn(process.execPath, [resolve(root, `apps/${app}/dist/main.js`)], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const ready = await new Promise<Record<string, unknown>>((resolveReady, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${app} not ready in ${timeoutMs} ms:\n${lines.join('\n')}`)),
      timeoutMs,
    );
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream! }).on('line', (line) => {
        lines.push(line);
        if (line.includes(`"msg":"${app} ready"`)) {
          clearTimeout(timer);
          resolveReady(JSON.parse(line) as Record<string, unknown>);
        }
      });
    }
    void exited.then((code) => {
      clearTimeout(timer);
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
    const child = spawn(process.execPath, [resolve(root, `apps/${app}/dist/main.js`)], {
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
