// Child processes of the benchmark: started with piped output, watched line by line, and always
// ended when the benchmark ends (normally, on an error, or on Ctrl-C).
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

const running = new Set();
const cleanups = [];
let exiting = false;

/** Runs `fn` (async, bounded to 15 s) before the children are killed on any exit path. */
export function onCleanup(fn) {
  cleanups.push(fn);
}

/**
 * Stops the services (children not started with `last`), runs the cleanup hooks (last registered
 * first), then stops whatever still runs (e.g. a private redis-server).
 */
export async function cleanupAll() {
  await Promise.all([...running].filter((c) => !c.last).map((child) => child.stop()));
  while (cleanups.length > 0) {
    const fn = cleanups.pop();
    await Promise.race([
      fn().catch((e) => console.error('cleanup failed:', e.message)),
      sleep(15_000),
    ]);
  }
  await Promise.all([...running].map((child) => child.stop()));
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (exiting) return;
    exiting = true;
    console.error(`\n${signal}: stopping children and removing the benchmark's keys…`);
    void cleanupAll().finally(() => process.exit(130));
  });
}
// Last resort: whatever happened, no child outlives the benchmark.
process.on('exit', () => {
  for (const child of running) child.proc.kill('SIGKILL');
});

/** A free TCP port on loopback (the OS picks it; the tiny race is acceptable on loopback). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a process and, with `ready`, waits until one of its output lines matches it.
 * @returns {Promise<Child>} `lines` holds the last 200 lines; `on(fn)` watches every line.
 */
export async function start(
  name,
  command,
  args,
  { env = {}, ready, timeoutMs = 30_000, last = false } = {},
) {
  const proc = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const child = new Child(name, proc);
  child.last = last;
  running.add(child);
  if (!ready) return child;
  let timer;
  try {
    await new Promise((resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${name} not ready in ${timeoutMs} ms:\n${child.tail()}`)),
        timeoutMs,
      );
      child.on((line) => {
        if (typeof ready === 'string' ? line.includes(ready) : ready.test(line)) resolve();
      });
      proc.once('exit', (code) =>
        reject(new Error(`${name} exited (${code}) before it was ready:\n${child.tail()}`)),
      );
    });
  } catch (error) {
    await child.stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return child;
}

class Child {
  constructor(name, proc) {
    this.name = name;
    this.proc = proc;
    this.lines = [];
    this.listeners = [];
    // 'close' (not 'exit'): every line of output has been read by then.
    this.exited = new Promise((resolve) =>
      proc.once('close', (code, signal) => resolve({ code, signal })),
    );
    void this.exited.then(() => running.delete(this));
    for (const stream of [proc.stdout, proc.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        this.lines.push(line);
        if (this.lines.length > 200) this.lines.shift();
        for (const fn of this.listeners) fn(line);
      });
    }
  }

  get pid() {
    return this.proc.pid;
  }

  on(fn) {
    this.listeners.push(fn);
  }

  tail(n = 30) {
    return this.lines.slice(-n).join('\n');
  }

  /** SIGTERM (or `signal`), then SIGKILL if it has not exited within `graceMs`. */
  async stop(signal = 'SIGTERM', graceMs = 8_000) {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return this.exited;
    this.proc.kill(signal);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    const outcome = await this.exited;
    clearTimeout(timer);
    return outcome;
  }
}

/** Polls `fn` until it returns a truthy value; throws after `timeoutMs`. */
export async function waitFor(
  fn,
  { timeoutMs = 30_000, intervalMs = 20, what = 'condition' } = {},
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Runs a command to completion and returns its stdout (throws on a non-zero exit). */
export async function run(name, command, args, { env = {}, timeoutMs = 120_000 } = {}) {
  const child = await start(name, command, args, { env });
  const timer = setTimeout(() => void child.stop('SIGKILL'), timeoutMs);
  const { code, signal } = await child.exited;
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${name} failed (${code ?? signal}):\n${child.tail()}`);
  return child.lines.join('\n');
}
