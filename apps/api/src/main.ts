import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { ConfigError } from '@longrun/core';
import {
  crashingFaults,
  createLogger,
  createRedis,
  FailureLog,
  JobTypeDirectory,
  LeaseBroker,
  shardsPerPrimary,
  taskKeys,
  TaskEngine,
  TaskEvents,
  TENANT_MAX_BYTES_WITHOUT_MAXMEMORY,
  WebhookTargetPolicy,
} from '@longrun/engine';
import { createListener } from './app.js';
import { followMaxMemory } from './storage-budget.js';
import { loadConfig } from './config.js';
import { devKey, newDevKey, type DevKey, type DevKeyKind } from './dev-key.js';
import { ApiKeys } from './http/auth.js';
import { streamLimits } from './http/stream-slots.js';
import { startTracing } from './tracing.js';

async function main(): Promise<void> {
  const config = loadConfig();
  // Before anything that could make a span: none is made unless the OTEL_* variables ask.
  const tracing = await startTracing('longrun-api', process.env);
  const logger = createLogger({
    process: 'api',
    level: config.LOG_LEVEL,
    format: config.LONGRUN_LOG_FORMAT,
    nodeEnv: config.NODE_ENV,
  });
  // What depends on Redis logs through this: a kind of failure once per 30 s while it is away.
  const failures = new FailureLog(logger);
  // Without keys, outside production: the development keys `npm start` keeps under the data
  // dir, or ones made and kept there, so `npm run start:api` serves the keys `npm start` printed.
  // A configured API (keys set) gets no development worker key: only the keys it is given.
  let keys = config.LONGRUN_API_KEYS;
  let workerKeys: ReadonlyMap<string, string> | undefined = config.LONGRUN_WORKER_KEYS;
  if (!keys || keys.size === 0) {
    keys = new Map([[servedDevKey('api'), 'dev']]);
    if (!workerKeys || workerKeys.size === 0)
      workerKeys = new Map([[servedDevKey('worker'), 'dev']]);
  }
  function servedDevKey(kind: DevKeyKind): string {
    let dev: DevKey;
    try {
      dev = devKey(resolve(config.LONGRUN_DATA_DIR), kind);
    } catch (error) {
      dev = { key: newDevKey(kind), file: '', made: true };
      logger.warn(
        { err: (error as Error).message, kind },
        'could not keep a dev key under LONGRUN_DATA_DIR: this one lasts until the API stops',
      );
    }
    const setting = kind === 'api' ? 'LONGRUN_API_KEYS' : 'LONGRUN_WORKER_KEYS';
    // The key goes to the terminal only, never into a log line a collector would keep.
    logger.warn(
      { tenant: 'dev', ...(dev.file ? { file: dev.file } : {}) },
      dev.made
        ? `${setting} is not set: made a dev key (on stderr)`
        : `${setting} is not set: serving the dev key kept in the data dir (on stderr)`,
    );
    const what = kind === 'api' ? 'API key (tenant "dev")' : 'worker key (HTTP workers)';
    console.error(`\n  longrun dev ${what}: ${dev.key}`);
    if (dev.file) console.error(`  (kept in ${dev.file}; delete it for a new one)`);
    console.error('');
    return dev.key;
  }
  const cluster = { clusterNodes: config.LONGRUN_REDIS_CLUSTER_NODES };
  const connection = createRedis(config.REDIS_URL, 'producer', {
    ...cluster,
    commandTimeoutMs: config.LONGRUN_REDIS_TIMEOUT_MS,
  });
  connection.on('error', (err: Error) => failures.warn({ err }, 'redis connection error'));
  const subscriber = createRedis(config.REDIS_URL, 'subscriber', cluster);
  subscriber.on('error', (err: Error) => failures.warn({ err }, 'redis subscriber error'));
  for (const conn of [connection, subscriber]) {
    conn.on('ready', () => failures.restored({}, 'redis connection restored'));
  }
  const events = new TaskEvents(subscriber, taskKeys(config.LONGRUN_PREFIX).eventsChannel);
  // The job types come from the registry workers publish to (re-read when one announces a change).
  const types = new JobTypeDirectory({
    connection,
    subscriber,
    prefix: config.LONGRUN_PREFIX,
    logger: failures,
  });
  const engine = new TaskEngine({
    connection,
    events,
    prefix: config.LONGRUN_PREFIX,
    shards: config.LONGRUN_SHARDS,
    types,
    webhookPolicy: new WebhookTargetPolicy(config.LONGRUN_WEBHOOK_ALLOW),
    pollIntervalMs: config.LONGRUN_POLL_INTERVAL_MS,
    defaultTtlMs: config.LONGRUN_DEFAULT_TTL_MS,
    maxTtlMs: config.LONGRUN_MAX_TTL_MS,
    redisTimeoutMs: config.LONGRUN_REDIS_TIMEOUT_MS,
    maxOpenTasks: config.LONGRUN_MAX_OPEN_TASKS,
    // Unset: 256 MiB until Redis's maxmemory is read, then a quarter of it (followMaxMemory).
    tenantMaxBytes: config.LONGRUN_TENANT_MAX_BYTES ?? TENANT_MAX_BYTES_WITHOUT_MAXMEMORY,
    maxSchedules: config.LONGRUN_MAX_SCHEDULES,
    scheduleMinEveryMs: config.LONGRUN_SCHEDULE_MIN_EVERY_MS,
    fairShare: config.LONGRUN_FAIR_SHARE === 'on' && { weights: config.LONGRUN_TENANT_WEIGHTS },
    logger: failures,
    faults: crashingFaults(config.LONGRUN_TEST_CRASH_AT),
  });
  await types.start();
  // Workers serve every shard the API processes announce: at start (retried until Redis
  // answers), again whenever the connection is made again (Redis may have come back empty: a
  // failover to a fresh replica, a restart without persistence), and every 30 s.
  const announce = () =>
    engine.announceShards().catch((err: unknown) => {
      failures.warn({ err }, 'could not announce the shard count; retrying in 5 s');
      setTimeout(() => void announce(), 5000).unref();
    });
  await announce();
  connection.on('ready', () => void engine.announceShards().catch(() => undefined));
  if (config.LONGRUN_TENANT_MAX_BYTES === undefined) {
    await followMaxMemory(engine, connection, logger, config.LONGRUN_REDIS_TIMEOUT_MS);
  }
  setInterval(() => void engine.announceShards().catch(() => undefined), 30_000).unref();
  if (cluster.clusterNodes.length > 0 && config.LONGRUN_SHARDS > 1) {
    // Where the shards fall: an operator sees at once whether the primaries share the work.
    const placed = await shardsPerPrimary(connection, config.LONGRUN_PREFIX, config.LONGRUN_SHARDS)
      .then((perPrimary) => Object.fromEntries(perPrimary))
      .catch(() => null);
    const counts = placed ? Object.values(placed) : [];
    const even = config.LONGRUN_SHARDS / Math.max(counts.length, 1);
    if (placed && Math.max(...counts) > Math.max(even * 1.5, even + 1)) {
      logger.warn(
        { shardsPerPrimary: placed },
        'shards are spread unevenly over the primaries: use about 4 shards per primary (LONGRUN_SHARDS), or move slots',
      );
    } else if (placed) logger.info({ shardsPerPrimary: placed }, 'shards over the primaries');
  }
  // Schedule ticks become tasks here: a BullMQ worker, so a connection that waits for Redis.
  const tickerConnection = createRedis(config.REDIS_URL, 'worker', cluster);
  tickerConnection.on('error', (err: Error) =>
    failures.warn({ err }, 'redis ticker connection error'),
  );
  tickerConnection.on('ready', () => failures.restored({}, 'redis connection restored'));
  await engine.startScheduleTicker(tickerConnection);
  // HTTP workers' leases: BullMQ's side needs a connection that waits for Redis (and one more,
  // per queue leased from, that BullMQ makes to block on while long polls wait).
  const leaseConnection = createRedis(config.REDIS_URL, 'worker', cluster);
  leaseConnection.on('error', (err: Error) =>
    failures.warn({ err }, 'redis lease connection error'),
  );
  const leases = new LeaseBroker({
    connection,
    workerConnection: leaseConnection,
    prefix: config.LONGRUN_PREFIX,
    shards: config.LONGRUN_SHARDS,
    maxTtlMs: config.LONGRUN_MAX_TTL_MS,
    types,
    leaseMs: config.LONGRUN_WORKER_LEASE_MS,
    maxTypesPerWorker: config.LONGRUN_WORKER_MAX_TYPES,
    maxResultBytes: config.LONGRUN_MAX_RESULT_BYTES,
    logger: failures,
  });
  const streams = streamLimits({
    total: config.LONGRUN_MAX_STREAMS,
    perTenant: config.LONGRUN_TENANT_MAX_STREAMS,
  });
  const listener = createListener({
    engine,
    keys: new ApiKeys(keys),
    logger,
    maxTtlMs: config.LONGRUN_MAX_TTL_MS,
    a2aDefaultSkill: config.LONGRUN_A2A_DEFAULT_SKILL,
    mcpConformance: config.LONGRUN_MCP_CONFORMANCE,
    rateLimitRps: config.LONGRUN_RATE_LIMIT_RPS,
    adminKeys: config.LONGRUN_ADMIN_KEYS,
    adminReadOnly: config.LONGRUN_ADMIN_READ_ONLY,
    streams,
    workers: {
      keys: new ApiKeys(workerKeys ?? new Map()),
      allowedTypes: config.LONGRUN_WORKER_KEYS?.types,
      rateLimitRps: config.LONGRUN_WORKER_RATE_LIMIT_RPS,
      leases,
      maxResultBytes: config.LONGRUN_MAX_RESULT_BYTES,
    },
  });
  // Slow clients (slowloris) cannot hold sockets open for long: the timeouts are checked every
  // second (Node's default check runs every 30 s, which would stretch them).
  const server = createServer(
    {
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: 1_000,
    },
    listener,
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (config.HOST) server.listen(config.PORT, config.HOST, resolve);
    else server.listen(config.PORT, resolve);
  }).catch((error: unknown) => {
    throw listenError(error, config.HOST, config.PORT);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info(
    { port, host: config.HOST ?? 'all interfaces', streams, tracing: tracing?.exporters ?? 'off' },
    'api ready',
  );
  if (config.LONGRUN_MCP_CONFORMANCE) {
    logger.warn(
      'LONGRUN_MCP_CONFORMANCE=true: the MCP door serves the conformance suite’s fixtures (test tools, prompts, resources); for running the suite, never in production',
    );
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'api stopping');
    setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.LONGRUN_SHUTDOWN_GRACE_MS + 5000).unref();
    // HTTP workers' long polls answer now (empty), so they do not hold the server open.
    leases.stopWaiting();
    const force = setTimeout(() => server.closeAllConnections(), config.LONGRUN_SHUTDOWN_GRACE_MS);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    clearTimeout(force);
    await leases.close().catch(() => undefined);
    await engine.close().catch(() => undefined);
    await types.close();
    await events.close();
    await Promise.allSettled(
      [connection, subscriber, tickerConnection, leaseConnection].map((c) => c.quit()),
    );
    await tracing?.shutdown().catch(() => undefined); // the last spans
    logger.info('api stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/**
 * A port the API cannot listen on is a setting to change, not a crash: one line naming the
 * variable that moves it (`PORT`), instead of Node's `EADDRINUSE` stack.
 */
function listenError(error: unknown, host: string | undefined, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const where = host ? `${host}:${port}` : String(port);
  if (code === 'EADDRINUSE') {
    return new ConfigError(
      `The API's port ${where} is taken (another API on this host?): set PORT to a free port, or 0 for any`,
    );
  }
  if (code === 'EACCES') {
    return new ConfigError(
      `The API may not listen on port ${where} (ports below 1024 need privileges): set PORT to another port`,
    );
  }
  if (code === 'EADDRNOTAVAIL') {
    return new ConfigError(
      `The API cannot listen on ${where}: HOST is not an address of this host`,
    );
  }
  return error;
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error('api failed to start:', error);
  process.exit(1);
});
