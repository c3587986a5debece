import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { inject } from 'vitest';
import { startApiProcess, type ApiProcess, type Proc } from './processes.js';
import { API_KEYS, startWorker, uniquePrefix } from './service.js';

/** What a test stack's processes share (a few settings shortened so tests run quickly). */
export interface McpStack {
  prefix: string;
  /** The API replicas (two processes on one Redis prefix), by index. */
  apis: ApiProcess[];
  worker: Proc;
  /** `LONGRUN_MAX_TTL_MS` of the replicas. */
  maxTtlMs: number;
  /** Stops replica `i` (SIGTERM) and starts a new process on the same port. */
  restart(i: number): Promise<void>;
}

const MAX_TTL_MS = 3_600_000;

/**
 * The running service as MCP clients meet it: the stock worker process and two API processes on
 * one prefix. `cleanups` collects what stops them; `extra` is added to every process's env.
 */
export async function startMcpStack(
  cleanups: Set<() => unknown>,
  extra: Record<string, string> = {},
): Promise<McpStack> {
  const prefix = uniquePrefix();
  const env = {
    REDIS_URL: inject('redisUrl'),
    LONGRUN_PREFIX: prefix,
    LONGRUN_API_KEYS: API_KEYS,
    LONGRUN_POLL_INTERVAL_MS: '200',
    LONGRUN_MAX_TTL_MS: String(MAX_TTL_MS),
    LONGRUN_DEFAULT_TTL_MS: '600000',
    // A restart waits this long for open streams (the clients' GET streams) before cutting them.
    LONGRUN_SHUTDOWN_GRACE_MS: '500',
    ...extra,
  };
  const worker = await startWorker(prefix, extra);
  cleanups.add(() => worker.stop());
  const apis = await Promise.all([startApiProcess(cleanups, env), startApiProcess(cleanups, env)]);
  return {
    prefix,
    apis,
    worker,
    maxTtlMs: MAX_TTL_MS,
    async restart(i) {
      const old = apis[i] as ApiProcess;
      await old.stop();
      apis[i] = await startApiProcess(cleanups, env, { port: old.port });
    },
  };
}

/** One request as the balancer routed it. */
export interface Routed {
  replica: number;
  httpMethod: string;
  /** The JSON-RPC method, `response` for a client's answer, `` for none (GET, DELETE). */
  rpc: string;
}

/**
 * A load balancer in front of the replicas, as a `fetch` for the clients' transports: requests
 * go round-robin; a client's answer to a server request (an elicitation) goes to a replica other
 * than the one holding the `tasks/result` stream it answers, so every answer crosses replicas.
 * Each request is logged.
 */
export class Balancer {
  readonly log: Routed[] = [];
  private next = 0;
  private lastResultStream = -1;

  constructor(private readonly stack: McpStack) {}

  /** The `/mcp` URL clients are given (the first replica's; the balancer rewrites it). */
  get url(): URL {
    return new URL(`${this.stack.apis[0]!.url}/mcp`);
  }

  readonly fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    const rpc = rpcOf(body);
    const count = this.stack.apis.length;
    let replica = this.next++ % count;
    if (rpc === 'response' && this.lastResultStream >= 0) {
      replica = (this.lastResultStream + 1) % count;
    }
    if (rpc === 'tasks/result') this.lastResultStream = replica;
    this.log.push({ replica, httpMethod: init?.method ?? 'GET', rpc });
    const target = new URL(input instanceof Request ? input.url : String(input));
    const base = new URL(this.stack.apis[replica]!.url);
    target.host = base.host;
    return fetch(target, init);
  };
}

function rpcOf(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  if (Array.isArray(body)) return rpcOf(body[0]);
  const method = (body as { method?: unknown }).method;
  return typeof method === 'string' ? method : 'response';
}

/** The client snippets of the README's MCP section, in order (2025-11-25, then Tasks V2). */
export function readmeMcpSnippets(): string[] {
  const readme = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## MCP\n'), readme.indexOf('\n## Job types\n'));
  return [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

/**
 * Runs a README snippet as a user would (an ES module with this repository's packages), against
 * `baseUrl` for `http://localhost:3000`, with `LONGRUN_API_KEY` set; resolves with its output.
 */
export function runSnippet(
  code: string,
  baseUrl: string,
  apiKey: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', code.replaceAll('http://localhost:3000', baseUrl)],
    {
      cwd: resolve(import.meta.dirname, '../..'),
      env: { ...process.env, LONGRUN_API_KEY: apiKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((done) =>
    child.once('exit', (exit) => {
      clearTimeout(timer);
      done({ code: exit, stdout, stderr });
    }),
  );
}
