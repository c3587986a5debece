import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { inject } from 'vitest';
import { ApiKeys, createListener } from '@longrun/api';
import type { Redis } from 'ioredis';
import type { JobCatalog } from '@longrun/core';
import {
  createRedis,
  describeJobType,
  engineParts,
  JobTypeDirectory,
  JobTypeRegistry,
  taskKeys,
  TaskEngine,
  TaskEvents,
  WebhookTargetPolicy,
  type EngineParts,
  type TaskEngineOptions,
  type TaskQueue,
  type TaskStore,
  type FairShareOptions,
} from '@longrun/engine/internal';
import { catalog } from '@longrun/worker-app';
import { httpClient } from './http.js';
import { startApp, type Proc } from './processes.js';

export const KEY_A = 'tenant-a-key-0123456789';
export const KEY_B = 'tenant-b-key-0123456789';
export const API_KEYS = `alpha:${KEY_A},beta:${KEY_B}`;

/**
 * For a test file that reads one shard's keys or queues, or asserts the order of one queue:
 * `LONGRUN_SHARDS=4 npm test` (the suite on shards) leaves it on one shard. Call at the top.
 */
export function oneShard(): void {
  process.env.LONGRUN_SHARDS = '1';
}

/**
 * The Redis Cluster the suite runs on (`LONGRUN_TEST_CLUSTER`), if any: the processes the tests
 * start inherit it, and the connections made here use it.
 */
const clusterNodes = inject('clusterNodes');
if (clusterNodes) process.env.LONGRUN_REDIS_CLUSTER_NODES = clusterNodes;
const cluster = { clusterNodes: clusterNodes ? clusterNodes.split(',') : [] };

/** Where an SDK worker made in a test connects: the suite's Redis, or its cluster. */
export function workerRedis(): { redisUrl: string; clusterNodes: string[] } {
  return { redisUrl: inject('redisUrl'), clusterNodes: cluster.clusterNodes };
}

/** A fresh key prefix, so tests sharing one Redis never see each other's keys. */
export function uniquePrefix(): string {
  const name = `test-${randomUUID().slice(0, 12)}`;
  // On a cluster every key of a shard needs one slot: a {hash tag}.
  return clusterNodes ? `{${name}}` : name;
}

/**
 * Registers job types in the prefix's registry as a worker does at start (here for an hour,
 * under the id `test-seed`), so that an API without a worker process accepts them.
 */
export async function registerTypes(
  connection: Redis,
  prefix: string,
  types: JobCatalog = catalog,
  workerId = 'test-seed',
): Promise<void> {
  if (connection.status !== 'ready') await new Promise((r) => connection.once('ready', r));
  const descriptors = [...types.values()].map(describeJobType);
  await new JobTypeRegistry(connection, prefix).publish(workerId, descriptors, 3_600_000);
}

/**
 * A real engine on `connection`, with its own subscriber for wake-ups and the prefix's job-type
 * registry (tests' defaults). The stock types are registered unless `register` is false.
 */
export async function buildEngine(
  connection: Redis,
  subscriber: Redis,
  opts: Partial<Omit<TaskEngineOptions, 'connection' | 'events' | 'types'>> & {
    register?: JobCatalog | false;
  } = {},
): Promise<{ engine: TaskEngine; types: JobTypeDirectory }> {
  const prefix = opts.prefix ?? uniquePrefix();
  if (opts.register !== false) await registerTypes(connection, prefix, opts.register || catalog);
  const types = new JobTypeDirectory({ connection, subscriber, prefix });
  await types.start();
  const engine = new TaskEngine({
    connection,
    events: new TaskEvents(subscriber, taskKeys(prefix).eventsChannel),
    types,
    webhookPolicy: new WebhookTargetPolicy([]),
    pollIntervalMs: 1000,
    defaultTtlMs: 86_400_000,
    maxTtlMs: 7 * 86_400_000,
    redisTimeoutMs: 2000,
    maxOpenTasks: 0,
    // `LONGRUN_SHARDS=4 npm test` runs the suite on shards (as the processes it starts do).
    shards: Number(process.env.LONGRUN_SHARDS ?? 1),
    ...opts,
    prefix,
  });
  await engine.announceShards().catch(() => undefined);
  return { engine, types };
}

export interface InProcessApi {
  url: string;
  prefix: string;
  engine: TaskEngine;
  /** The job types as this API reads them from the registry. */
  types: JobTypeDirectory;
  /** The engine's shards, queues and stores (`engineParts`: tests only, never a door). */
  parts: EngineParts;
  /** Shard 0's BullMQ side (queues). */
  tasks: TaskQueue;
  store: TaskStore;
  events: TaskEvents;
  /** Client as tenant "alpha". */
  http: ReturnType<typeof httpClient>;
  close(): Promise<void>;
}

/** The real API (`createListener`: the app behind its fast lane) on a real listening socket, in this process. */
export async function startInProcessApi(
  opts: {
    prefix?: string;
    rateLimitRps?: number;
    adminKeys?: string[];
    /** LONGRUN_ADMIN_READ_ONLY (default true). */
    adminReadOnly?: boolean;
    maxOpenTasks?: number;
    /** LONGRUN_TENANT_MAX_BYTES (0 or unset: no budget). */
    tenantMaxBytes?: number;
    /** LONGRUN_WEBHOOK_ALLOW entries. */
    webhookAllow?: string[];
    /** LONGRUN_MAX_SCHEDULES (default 100). */
    maxSchedules?: number;
    /** LONGRUN_FAIR_SHARE / LONGRUN_TENANT_WEIGHTS (default: on, every weight 1). */
    fairShare?: FairShareOptions | false;
    /** LONGRUN_SHARDS (default: the suite's, 1 unless set). */
    shards?: number;
    redisUrl?: string;
    pollIntervalMs?: number;
    redisTimeoutMs?: number;
    maxTtlMs?: number;
    /** Job types to register before start (default: the stock ones); false: none. */
    register?: JobCatalog | false;
    /** Submits without Express where they can be (default true, as in production). */
    fastLane?: boolean;
    /** LONGRUN_TENANT_MAX_STREAMS / LONGRUN_MAX_STREAMS (default: from the open-file limit). */
    streams?: { perTenant: number; total: number };
  } = {},
): Promise<InProcessApi> {
  const prefix = opts.prefix ?? uniquePrefix();
  const redisTimeoutMs = opts.redisTimeoutMs ?? 2000;
  const connection = createRedis(opts.redisUrl ?? inject('redisUrl'), 'producer', {
    commandTimeoutMs: redisTimeoutMs,
    ...(opts.redisUrl ? {} : cluster),
  });
  connection.on('error', () => undefined);
  const maxTtlMs = opts.maxTtlMs ?? 7 * 86_400_000;
  const subscriber = createRedis(
    opts.redisUrl ?? inject('redisUrl'),
    'subscriber',
    opts.redisUrl ? {} : cluster,
  );
  subscriber.on('error', () => undefined);
  const { engine, types } = await buildEngine(connection, subscriber, {
    prefix,
    register: opts.register ?? catalog,
    webhookPolicy: new WebhookTargetPolicy(opts.webhookAllow ?? []),
    pollIntervalMs: opts.pollIntervalMs ?? 1000,
    maxTtlMs,
    redisTimeoutMs,
    maxOpenTasks: opts.maxOpenTasks ?? 0,
    tenantMaxBytes: opts.tenantMaxBytes ?? 0,
    ...(opts.maxSchedules !== undefined ? { maxSchedules: opts.maxSchedules } : {}),
    fairShare: opts.fairShare,
    ...(opts.shards !== undefined ? { shards: opts.shards } : {}),
  });
  const listener = createListener({
    engine,
    keys: new ApiKeys(
      new Map([
        [KEY_A, 'alpha'],
        [KEY_B, 'beta'],
      ]),
    ),
    logger: pino({ level: 'silent' }),
    maxTtlMs,
    rateLimitRps: opts.rateLimitRps ?? 0,
    adminKeys: opts.adminKeys ?? [],
    adminReadOnly: opts.adminReadOnly ?? true,
    fastLane: opts.fastLane ?? true,
    ...(opts.streams ? { streams: opts.streams } : {}),
  });
  const server: Server = await new Promise((resolve) => {
    const s = createServer(listener).listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    prefix,
    engine,
    types,
    parts: engineParts(engine),
    tasks: engineParts(engine).jobs,
    store: engineParts(engine).store,
    events: engine.events,
    http: httpClient(url, KEY_A),
    async close() {
      server.closeAllConnections();
      // Each step bounded: with the test's Redis stopped, a close that sends a command waits
      // for a reconnection that never comes (seen once in CI); disconnecting ends it.
      const bounded = (step: Promise<unknown>) =>
        Promise.race([step.catch(() => undefined), new Promise((r) => setTimeout(r, 3000))]);
      await bounded(new Promise((r) => server.close(r)));
      await bounded(engine.close());
      await bounded(types.close());
      connection.disconnect();
      subscriber.disconnect();
    },
  };
}

/** A real worker process on the given prefix. */
export function startWorker(prefix: string, env: Record<string, string> = {}): Promise<Proc> {
  return startApp('worker', {
    REDIS_URL: inject('redisUrl'),
    LONGRUN_PREFIX: prefix,
    LONGRUN_METRICS_PORT: '0',
    LONGRUN_METRICS_HOST: '127.0.0.1',
    ...env,
  });
}
