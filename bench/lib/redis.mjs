// Redis for the benchmark: a private redis-server (default) or an existing one, INFO parsing,
// and removal of a prefix's keys (SCAN + UNLINK, never FLUSHALL).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, onCleanup, start } from './children.mjs';

/**
 * Starts a throwaway redis-server on a free loopback port: no persistence, `noeviction`, so that
 * INFO commandstats and used_memory deltas see only the benchmark's own traffic.
 */
export async function startPrivateRedis() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'longrun-bench-redis-'));
  const child = await start(
    'redis-server',
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--maxmemory-policy',
      'noeviction',
      '--protected-mode',
      'yes',
    ],
    { ready: 'Ready to accept connections', timeoutMs: 10_000, last: true },
  );
  onCleanup(async () => {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { url: `redis://127.0.0.1:${port}`, port, child };
}

export function connect(url) {
  return new Redis(url, { maxRetriesPerRequest: null, connectionName: 'longrun-bench' });
}

/** INFO <section> as a flat object of strings. */
export async function info(redis, section) {
  const out = {};
  for (const line of (await redis.info(section)).split('\r\n')) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) out[line.slice(0, at)] = line.slice(at + 1);
  }
  return out;
}

/** Calls per command since the server started (INFO commandstats). */
export async function commandCalls(redis) {
  const calls = {};
  for (const [key, value] of Object.entries(await info(redis, 'commandstats'))) {
    const match = /calls=(\d+)/.exec(value);
    if (match) calls[key.replace(/^cmdstat_/, '')] = Number(match[1]);
  }
  return calls;
}

/**
 * Calls and microseconds per command since the server started (INFO commandstats). A script's
 * time includes the commands it ran, and those are counted under their own names as well.
 */
export async function commandStats(redis) {
  const stats = {};
  for (const [key, value] of Object.entries(await info(redis, 'commandstats'))) {
    const match = /calls=(\d+),usec=(\d+)/.exec(value);
    if (match) {
      stats[key.replace(/^cmdstat_/, '')] = { calls: Number(match[1]), usec: Number(match[2]) };
    }
  }
  return stats;
}

/** Per-command call deltas between two `commandCalls` snapshots, without INFO itself. */
export function callDelta(before, after) {
  const delta = {};
  for (const [cmd, n] of Object.entries(after)) {
    const d = n - (before[cmd] ?? 0);
    if (d > 0 && cmd !== 'info') delta[cmd] = d;
  }
  return delta;
}

export async function usedMemory(redis) {
  return Number((await info(redis, 'memory')).used_memory);
}

/** UNLINKs every key under `<prefix>:`; returns how many. */
export async function removePrefix(redis, prefix) {
  let cursor = '0';
  let removed = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) removed += await redis.unlink(...keys);
  } while (cursor !== '0');
  return removed;
}

/** The redis-server's CPU time so far (user + system, `INFO cpu`), in µs. */
export async function redisCpuUs(redis) {
  const cpu = await info(redis, 'cpu');
  return (Number(cpu.used_cpu_sys) + Number(cpu.used_cpu_user)) * 1e6;
}
