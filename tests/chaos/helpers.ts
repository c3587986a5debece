// Shared pieces of the reliability ("chaos") suite: scaling, private Redis servers, a raw HTTP
// client that reports network errors by code, memory probes, and the books every scenario ends on.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { shardOfTaskId, shardPrefix, TaskLog, taskKeys } from '@longrun/engine/internal';
// @ts-expect-error plain ESM helper shared with `npm start`
import { findRedisServer, freePort, startRedis } from '../../scripts/redis.mjs';

/** Terminal statuses, as stored in the task record. */
export const TERMINAL = new Set(['completed', 'cancelled', 'failed']);

/**
 * Worker env for scenarios that read the books: mark every run `running` before its handler
 * starts (by default a run that ends within 100 ms is never marked), so the books can count
 * runs, and duplicates, from the events.
 */
export const COUNT_RUNS = { LONGRUN_RUNNING_MARK_MS: '0' } as const;

/**
 * Size of a scenario: `CHAOS_<NAME>` if set, else `full × CHAOS_SCALE` (default 1), at least `min`.
 * @example scaled('LOAD_JOBS', 20_000, 200) // 2 000 with CHAOS_SCALE=0.1
 */
export function scaled(name: string, full: number, min = 1): number {
  const own = process.env[`CHAOS_${name}`];
  if (own) return Math.max(Number(own), min);
  const scale = Number(process.env.CHAOS_SCALE ?? '1');
  return Math.max(Math.round(full * (Number.isFinite(scale) && scale > 0 ? scale : 1)), min);
}

/** Prints one scenario's figures as a JSON line (and appends it to `CHAOS_REPORT` when set). */
export function report(scenario: string, figures: Record<string, unknown>): void {
  const line = JSON.stringify({ scenario, scale: process.env.CHAOS_SCALE ?? '1', ...figures });
  console.log(`[chaos] ${line}`);
  if (process.env.CHAOS_REPORT) writeFileSync(process.env.CHAOS_REPORT, `${line}\n`, { flag: 'a' });
}

/** Things to undo after a test, in reverse order, whatever happened. */
export class Cleanups {
  private readonly items: (() => unknown)[] = [];
  add(fn: () => unknown): void {
    this.items.push(fn);
  }
  async run(): Promise<void> {
    for (const fn of this.items.splice(0).reverse()) {
      await Promise.resolve()
        .then(fn)
        .catch(() => undefined);
    }
  }
}

export function tempDir(cleanups: Cleanups, label = 'chaos'): string {
  const dir = mkdtempSync(join(tmpdir(), `longrun-${label}-`));
  cleanups.add(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface PrivateRedis {
  url: string;
  port: number;
  dir: string;
  child: ChildProcess;
  /** SIGTERM (Redis flushes and fsyncs its AOF) and wait for exit. */
  stop(): Promise<void>;
  /** Sends `signal` and waits for exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** A redis-server of our own on a free (or the given) port; never the shared one. */
export async function privateRedis(
  cleanups: Cleanups,
  opts: { dir: string; port?: number; appendonly?: boolean; args?: string[] },
): Promise<PrivateRedis> {
  const bin = findRedisServer() as string | null;
  if (!bin) throw new Error('redis-server binary not found');
  const port: number = opts.port ?? ((await freePort()) as number);
  const started = (await startRedis({
    bin,
    port,
    dir: opts.dir,
    appendonly: opts.appendonly ?? false,
    args: opts.args ?? [],
  })) as { url: string; port: number; child: ChildProcess; stop(): Promise<void> };
  const exited = new Promise<void>((r) => {
    if (started.child.exitCode !== null || started.child.signalCode !== null) r();
    else started.child.once('exit', () => r());
  });
  const redis: PrivateRedis = {
    url: started.url,
    port,
    dir: opts.dir,
    child: started.child,
    stop: () => started.stop(),
    async kill(signal) {
      if (started.child.exitCode === null && started.child.signalCode === null) {
        started.child.kill(signal);
      }
      await exited;
    },
  };
  cleanups.add(() => redis.kill('SIGKILL'));
  return redis;
}

/** A plain connection for inspection (INFO, CONFIG, DEBUG, reading records); closed at cleanup. */
export function adminRedis(cleanups: Cleanups, url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 3, lazyConnect: false });
  redis.on('error', () => undefined);
  cleanups.add(() => redis.quit().catch(() => redis.disconnect()));
  return redis;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON
  body: any;
  ms: number;
}

/** A network-level failure, with the socket error's code (ECONNREFUSED, ECONNRESET, …). */
export class NetError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** True when the request had been written to an open connection before the failure. */
    readonly sent: boolean,
  ) {
    super(message);
  }
}

/**
 * One HTTP request with `node:http`, so a failure keeps its socket error code (fetch hides it).
 * Rejects with `NetError` on network failure or when `timeoutMs` passes.
 */
export function rawRequest(
  base: string,
  opts: {
    method?: string;
    path: string;
    key?: string;
    headers?: Record<string, string>;
    body?: unknown;
    raw?: string | Buffer;
    agent?: Agent | false;
    timeoutMs?: number;
  },
): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let payload: string | Buffer | undefined = opts.raw;
  if (opts.body !== undefined) {
    payload = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let sent = false;
    // The path is sent as given (no URL normalisation of `.` / `..` / percent-escapes).
    const req = httpRequest(
      {
        host: hostname,
        port,
        path: opts.path,
        method: opts.method ?? 'GET',
        headers,
        agent: opts.agent ?? undefined,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e: NodeJS.ErrnoException) =>
          reject(new NetError(e.code ?? 'ERESPONSE', e.message, true)),
        );
        res.on('end', () => {
          if (!res.complete) {
            reject(new NetError('ETRUNCATED', 'response ended before it was complete', true));
            return;
          }
          const text = Buffer.concat(chunks).toString();
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            body,
            ms: performance.now() - started,
          });
        });
      },
    );
    if (opts.timeoutMs) {
      req.setTimeout(opts.timeoutMs, () =>
        req.destroy(Object.assign(new Error('client timeout'), { code: 'ECLIENTTIMEOUT' })),
      );
    }
    req.on('finish', () => (sent = true));
    req.on('error', (e: NodeJS.ErrnoException) =>
      reject(new NetError(e.code ?? 'EUNKNOWN', e.message, sent)),
    );
    req.end(payload);
  });
}

/** Runs `fn` over `items` with at most `concurrency` calls in flight. */
export async function pool<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i] as T, i);
    }
  });
  await Promise.all(lanes);
}

/** Counts per key, e.g. status codes. */
export class Tally {
  readonly counts: Record<string, number> = {};
  add(key: string | number, n = 1): void {
    this.counts[String(key)] = (this.counts[String(key)] ?? 0) + n;
  }
  get(key: string | number): number {
    return this.counts[String(key)] ?? 0;
  }
  keys(): string[] {
    return Object.keys(this.counts);
  }
}

/** Resident set size of a process in bytes (Linux `/proc/<pid>/status` VmRSS). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1]);
  return kb * 1024;
}

/**
 * NODE_OPTIONS that make a child process answer SIGUSR2 by running a full GC and printing
 * `{"msg":"chaos-heap",heapUsed,rss,…}` on stderr: heap after GC without touching the app's code.
 */
export function heapProbeOptions(cleanups: Cleanups): string {
  const dir = tempDir(cleanups, 'heap-probe');
  const file = join(dir, 'probe.cjs');
  writeFileSync(
    file,
    `process.on('SIGUSR2', () => {
  global.gc(); global.gc();
  const m = process.memoryUsage();
  process.stderr.write(JSON.stringify({ msg: 'chaos-heap', at: Date.now(), heapUsed: m.heapUsed,
    heapTotal: m.heapTotal, rss: m.rss, external: m.external, arrayBuffers: m.arrayBuffers }) + '\\n');
});
`,
  );
  return `${process.env.NODE_OPTIONS ?? ''} --expose-gc --require ${file}`.trim();
}

export interface HeapSample {
  heapUsed: number;
  heapTotal: number;
  rss: number;
  external: number;
}

/** Heap after a full GC in a process started with `heapProbeOptions`. */
export async function heapAfterGc(proc: {
  child: ChildProcess;
  lines: string[];
}): Promise<HeapSample> {
  const seen = proc.lines.length;
  proc.child.kill('SIGUSR2');
  for (let i = 0; i < 200; i++) {
    const line = proc.lines.slice(seen).find((l) => l.includes('"msg":"chaos-heap"'));
    if (line) return JSON.parse(line) as HeapSample;
    await sleep(25);
  }
  throw new Error('no heap sample from the process');
}

export const mb = (bytes: number): number => Math.round((bytes / 1048576) * 10) / 10;

/** Sum of the Prometheus samples named `name` whose labels include `labels` (0 when none). */
export function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  const total = text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .filter((l) => Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)))
    .map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));
  return total.reduce((a, b) => a + b, 0);
}

export interface Books {
  accepted: number;
  completed: number;
  failed: number;
  cancelled: number;
  /** Accepted (202) but no record any more. */
  lost: number;
  /** Accepted, record present, not terminal when the books were closed. */
  unfinished: number;
  /** Tasks whose handler started more than once. */
  duplicated: number;
  /** Handler starts beyond the first, summed over tasks. */
  extraRuns: number;
  /** Tasks whose stream shows more than one terminal entry (must be 0: the guard forbids it). */
  terminalTwice: number;
  /** Task records in Redis that no 202 acknowledged. */
  unacknowledged: number;
  lostIds: string[];
  unfinishedIds: string[];
}

/**
 * Reads the state of every accepted task straight from Redis, and counts executions from each
 * task's event list (`<prefix>:events:<id>`, JSON entries `{s, st, m, u}`): every run appends a
 * `running` entry when it starts, so `running` entries per task = handler starts.
 */
export async function readBooks(
  redis: Redis,
  prefix: string,
  acceptedIds: Iterable<string>,
): Promise<Books> {
  const ids = [...new Set(acceptedIds)];
  const books: Books = {
    accepted: ids.length,
    completed: 0,
    failed: 0,
    cancelled: 0,
    lost: 0,
    unfinished: 0,
    duplicated: 0,
    extraRuns: 0,
    terminalTwice: 0,
    unacknowledged: 0,
    lostIds: [],
    unfinishedIds: [],
  };
  for (let start = 0; start < ids.length; start += 500) {
    const batch = ids.slice(start, start + 500);
    const pipeline = redis.pipeline();
    for (const id of batch) pipeline.hget(`${shardOf(prefix, id)}:task:${id}`, 'status');
    const replies = (await pipeline.exec()) ?? [];
    const histories = await Promise.all(batch.map((id) => historyOf(redis, prefix, id)));
    batch.forEach((id, i) => {
      const [statusErr, status] = replies[i] ?? [];
      const events = histories[i] ?? [];
      if (statusErr) throw statusErr;
      if (typeof status !== 'string') {
        books.lost += 1;
        books.lostIds.push(id);
        return;
      }
      if (status === 'completed') books.completed += 1;
      else if (status === 'failed') books.failed += 1;
      else if (status === 'cancelled') books.cancelled += 1;
      else {
        books.unfinished += 1;
        books.unfinishedIds.push(id);
      }
      let runs = 0;
      let terminal = 0;
      for (const event of events) {
        if (event.m === 'running') runs += 1;
        if (TERMINAL.has(event.st)) terminal += 1;
      }
      if (runs > 1) {
        books.duplicated += 1;
        books.extraRuns += runs - 1;
      }
      if (terminal > 1) books.terminalTwice += 1;
    });
  }
  const known = new Set(ids);
  for (const shard of suiteShards(prefix)) {
    for await (const keys of redis.scanStream({ match: `${shard}:task:*`, count: 1000 })) {
      for (const key of keys as string[]) {
        if (!known.has(key.slice(`${shard}:task:`.length))) books.unacknowledged += 1;
      }
    }
  }
  return books;
}

/** Waits until every accepted task is terminal or gone (or the time runs out), then reads the books. */
export async function closeBooks(
  redis: Redis,
  prefix: string,
  acceptedIds: Iterable<string>,
  { timeoutMs = 120_000 } = {},
): Promise<Books> {
  const ids = [...new Set(acceptedIds)];
  const deadline = Date.now() + timeoutMs;
  let pending = ids;
  while (pending.length > 0 && Date.now() < deadline) {
    const still: string[] = [];
    for (let start = 0; start < pending.length; start += 1000) {
      const batch = pending.slice(start, start + 1000);
      const pipeline = redis.pipeline();
      for (const id of batch) pipeline.hget(`${shardOf(prefix, id)}:task:${id}`, 'status');
      const replies = (await pipeline.exec()) ?? [];
      batch.forEach((id, i) => {
        const status = replies[i]?.[1];
        if (typeof status === 'string' && !TERMINAL.has(status)) still.push(id);
      });
    }
    pending = still;
    if (pending.length > 0) await sleep(250);
  }
  return readBooks(redis, prefix, ids);
}

/** The books without the id lists, for reports. */
export function summary(books: Books): Omit<Books, 'lostIds' | 'unfinishedIds'> {
  const { lostIds: _l, unfinishedIds: _u, ...rest } = books;
  return rest;
}

/** A fresh Idempotency-Key. */
export const idemKey = (): string => `chaos-${randomUUID()}`;

/** Elapsed seconds since `started` (performance.now()), one decimal. */
export const secondsSince = (started: number): number =>
  Math.round((performance.now() - started) / 100) / 10;

export interface RawExchange {
  /** Status code of the first response, if one arrived. */
  status?: number;
  /** Everything the server sent. */
  received: string;
  /** The server closed (or reset) the connection. */
  closed: boolean;
  /** Socket error code, if any (ECONNRESET, …). */
  error?: string;
  /** Milliseconds from connect to the end of the exchange. */
  ms: number;
}

/**
 * Sends raw bytes on a fresh TCP connection to 127.0.0.1:`port` and reads what comes back until the
 * first response head is complete (`untilClose: false`), the server closes, or `timeoutMs`.
 * `chunks` are written `gapMs` apart (slow clients).
 */
export function rawExchange(
  port: number,
  chunks: (string | Buffer)[],
  opts: { timeoutMs?: number; gapMs?: number; untilClose?: boolean } = {},
): Promise<RawExchange> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let done = false;
    const finish = (closed: boolean, error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      clearTimeout(writer);
      socket.destroy();
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(received)?.[1];
      resolve({
        ...(status ? { status: Number(status) } : {}),
        received,
        closed,
        ...(error ? { error } : {}),
        ms: performance.now() - started,
      });
    };
    let writer: NodeJS.Timeout | undefined;
    let next = 0;
    const writeNext = () => {
      if (done || next >= chunks.length) return;
      socket.write(chunks[next++]!, () => undefined);
      if (next < chunks.length) writer = setTimeout(writeNext, opts.gapMs ?? 0);
    };
    socket.on('connect', writeNext);
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
      if (!opts.untilClose && received.includes('\r\n\r\n')) finish(false);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', (e: NodeJS.ErrnoException) => finish(true, e.code));
    const deadline = setTimeout(() => finish(false), timeoutMs);
  });
}

/** Percent-encodes every byte of the UTF-8 form of `s` but unreserved ones (lone surrogates too). */
export function pct(s: string): string {
  return [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

export { startApiProcess, type ApiProcess } from '../helpers/processes.js';

/**
 * A keep-alive agent whose idle sockets close after 4 s, before the API's keepAliveTimeout (5 s):
 * otherwise a request can race the server closing an idle socket and see ECONNRESET, a client-side
 * artefact of keep-alive rather than a request the server dropped.
 */
export function keepAliveAgent(cleanups: Cleanups, maxSockets = Infinity): Agent {
  const agent = new Agent({ keepAlive: true, maxSockets, timeout: 4000 });
  cleanups.add(() => agent.destroy());
  return agent;
}

/** p50 / p99 / max of a list of milliseconds, rounded. */
export function percentiles(values: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => Math.round(sorted[Math.floor((sorted.length - 1) * p)] ?? 0);
  return { p50: at(0.5), p99: at(0.99), max: at(1) };
}

/** The key prefix of the shard a task id names (the prefix itself with one shard). */
function shardOf(prefix: string, id: string): string {
  return shardPrefix(prefix, shardOfTaskId(id));
}

/** The key of task `id`'s record under `prefix` (on its shard). */
export function recordKey(prefix: string, id: string): string {
  return `${shardOf(prefix, id)}:task:${id}`;
}

/** Every shard's prefix, as many as the suite runs with (`LONGRUN_SHARDS`, default 1). */
function suiteShards(prefix: string): string[] {
  const count = Number(process.env.LONGRUN_SHARDS ?? 1);
  return Array.from({ length: count }, (_, i) => shardPrefix(prefix, i));
}

/**
 * A task's history as `{ st, m }` (status, message) per event, read as the API reads it
 * (`TaskLog`: kept in the record since decision 57).
 */
export async function historyOf(
  redis: Redis,
  prefix: string,
  id: string,
): Promise<{ st: string; m: string }[]> {
  const log = new TaskLog(redis, taskKeys(shardOf(prefix, id)));
  const events = await log.events(id, undefined, 1000);
  return events.map((e) => ({ st: e.status, m: e.statusMessage }));
}

/**
 * Two worker processes made by `start`, one of them SIGKILLed and started again every
 * `killEveryMs` (in turn) until `stop()`, which returns how many were killed.
 * @example const fleet = await killedWorkers(cleanups, 2000, () => startWorker(prefix, env));
 */
export async function killedWorkers(
  cleanups: Cleanups,
  killEveryMs: number,
  start: () => Promise<{ kill(): Promise<void> }>,
): Promise<{ stop(): Promise<number> }> {
  const workers = [await start(), await start()];
  cleanups.add(() => Promise.allSettled(workers.map((w) => w.kill())));
  let stop = false;
  let kills = 0;
  const killer = (async () => {
    await sleep(killEveryMs / 2);
    for (let slot = 0; !stop; slot = 1 - slot) {
      await workers[slot]!.kill();
      kills += 1;
      workers[slot] = await start();
      await sleep(killEveryMs);
    }
  })();
  return {
    async stop() {
      stop = true;
      await killer;
      return kills;
    },
  };
}
