import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
// @ts-expect-error plain ESM helper shared with `npm start`
import { findRedisServer, freePort, startRedis } from '../../scripts/redis.mjs';
import { waitFor } from './http.js';

interface RedisProc {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A Redis Cluster of its own, on free loopback ports with its own data dirs. */
export interface LocalCluster {
  /** `host:port` of each primary, for `LONGRUN_REDIS_CLUSTER_NODES`. */
  addresses: string[];
  /** The same, comma-separated. */
  nodes: string;
  ports: number[];
  stop(): Promise<void>;
}

/** A free port whose cluster bus port (+10000) is free too. */
async function clusterPort(): Promise<number> {
  for (;;) {
    const port: number = await freePort();
    if (port + 10_000 < 65_536) return port;
  }
}

/**
 * Starts `primaries` redis-server processes in cluster mode and joins them with `redis-cli
 * --cluster create` (no replicas): each primary holds an equal range of the slots.
 */
export async function startCluster(primaries = 3): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'longrun-cluster-'));
  const bin = findRedisServer();
  const servers: RedisProc[] = [];
  for (let i = 0; i < primaries; i++) {
    const port = await clusterPort();
    const nodeDir = join(dir, String(port));
    servers.push(
      await startRedis({
        bin,
        port,
        dir: nodeDir,
        appendonly: false,
        args: [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(nodeDir, 'nodes.conf'),
          '--cluster-node-timeout',
          '2000',
        ],
      }),
    );
  }
  const addresses = servers.map((s) => `127.0.0.1:${s.port}`);
  const created = spawnSync(
    'redis-cli',
    ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'],
    { encoding: 'utf8' },
  );
  if (created.status !== 0) throw new Error(created.stdout + created.stderr);
  for (const s of servers) {
    const r = new Redis(s.port, '127.0.0.1');
    await waitFor(async () => (await r.cluster('INFO')).includes('cluster_state:ok'), {
      what: 'cluster ok',
    });
    r.disconnect();
  }
  return {
    addresses,
    nodes: addresses.join(','),
    ports: servers.map((s) => s.port),
    async stop() {
      for (const s of servers) await s.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What a primary has done so far: commands (`INFO stats`) and CPU seconds (`INFO cpu`). */
export interface PrimaryWork {
  commands: number;
  cpuSeconds: number;
}

/** Each primary's work so far, in the order of `ports`. */
export async function primaryWork(ports: readonly number[]): Promise<PrimaryWork[]> {
  return Promise.all(
    ports.map(async (port) => {
      const r = new Redis(port, '127.0.0.1');
      try {
        const info = await r.info();
        const field = (name: string) =>
          Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? Number.NaN);
        return {
          commands: field('total_commands_processed'),
          cpuSeconds: field('used_cpu_user') + field('used_cpu_sys'),
        };
      } finally {
        r.disconnect();
      }
    }),
  );
}
