import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startCluster } from './helpers/cluster.js';
// @ts-expect-error plain ESM helper shared with `npm start`
import { findRedisServer, freePort, ping, startRedis } from '../scripts/redis.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    /** `host:port,…` of a Redis Cluster the suite runs on (`LONGRUN_TEST_CLUSTER`), or ''. */
    clusterNodes: string;
  }
}

/**
 * Uses REDIS_URL, else the Redis on 127.0.0.1:6379, else starts a throwaway redis-server
 * (installing Debian's package when it is missing and we are root).
 */
export default async function setup(project: TestProject) {
  // Fault tests start their own servers: make sure the binary exists whichever Redis we use.
  const bin = findRedisServer({ install: true });
  project.provide('clusterNodes', '');
  const primaries = Number(process.env.LONGRUN_TEST_CLUSTER ?? 0);
  if (primaries > 0) {
    // The suite on a Redis Cluster of its own: `LONGRUN_TEST_CLUSTER=3 LONGRUN_SHARDS=12 npx
    // vitest run <files>` (tests that read keys by hand on one connection do not apply).
    const cluster = await startCluster(primaries);
    console.log(`[tests] started a ${primaries}-primary Redis Cluster at ${cluster.nodes}`);
    project.provide('redisUrl', `redis://${cluster.addresses[0] as string}`);
    project.provide('clusterNodes', cluster.nodes);
    return () => cluster.stop();
  }
  if (process.env.REDIS_URL) {
    project.provide('redisUrl', process.env.REDIS_URL);
    return;
  }
  if (await ping('127.0.0.1', 6379)) {
    project.provide('redisUrl', 'redis://127.0.0.1:6379');
    return;
  }
  if (!bin)
    throw new Error('No Redis answers on 127.0.0.1:6379 and redis-server cannot be installed');
  const dir = mkdtempSync(join(tmpdir(), 'longrun-test-redis-'));
  const redis = await startRedis({ bin, port: await freePort(), dir, appendonly: false });
  console.log(`[tests] started redis-server at ${redis.url}`);
  project.provide('redisUrl', redis.url);
  return async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
