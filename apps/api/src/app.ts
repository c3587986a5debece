import type { RequestListener, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import type { LeaseBroker, TaskEngine } from '@longrun/engine';
import { JSONRPC_PATH, REST_PATH } from './a2a/card.js';
import { a2aRouter } from './a2a/router.js';
import { ApiKeys, requireTenant, requireWorker } from './http/auth.js';
import { ApiMetrics } from './http/metrics.js';
import { RunMetrics } from './http/run-metrics.js';
import { rateLimit } from './http/rate-limit.js';
import { WorkerLimiter, workerRateLimit } from './http/worker-rate-limit.js';
import { defaultStreamLimits, StreamSlots, type StreamLimits } from './http/stream-slots.js';
import { fastLane } from './http/fast-lane.js';
import { requestLog, type RequestObserver } from './http/request-log.js';
import { errorHandler, notFound } from './http/problem.js';
import { methodNotAllowed } from './http/method-not-allowed.js';
import { buildOpenApiDocument } from './openapi.js';
import { consoleRouter } from './routes/console.js';
import { docsRouter } from './routes/docs.js';
import { ADMIN_QUEUES_PATH, adminRouter } from './routes/admin.js';
import { healthRouter } from './routes/health.js';
import { indexRouter } from './routes/index.js';
import { addJobTypeRoutes } from './routes/job-types.js';
import { addJobRoutes } from './routes/jobs.js';
import { problemsRouter } from './routes/problems.js';
import { addReplayRoutes } from './routes/replay.js';
import { addScheduleRoutes } from './routes/schedules.js';
import { addWorkerRoutes } from './routes/worker.js';
import { addStepRoutes } from './routes/steps.js';
import { addWaitpointRoutes } from './routes/waitpoints.js';
import { mountMcp } from './mcp/index.js';

export interface AppDeps {
  /** The task engine every route calls (it owns the task keys, queues and Redis deadlines). */
  engine: TaskEngine;
  keys: ApiKeys;
  logger: Logger;
  maxTtlMs: number;
  /** The skill a text-only A2A message naming none starts (LONGRUN_A2A_DEFAULT_SKILL). */
  a2aDefaultSkill?: string | undefined;
  /** The MCP door's conformance profile (LONGRUN_MCP_CONFORMANCE): the suite's fixtures. */
  mcpConformance?: boolean | undefined;
  /** Requests per second per tenant; 0 = no limit. */
  rateLimitRps: number;
  /** Keys for `/admin/queues` (bull-board); empty: not mounted. */
  adminKeys?: readonly string[];
  /** bull-board read-only (default true). */
  adminReadOnly?: boolean;
  /** Submits answered without Express where they can be (default true; see http/fast-lane.ts). */
  fastLane?: boolean;
  /**
   * Caps on open long-lived requests (event streams, MCP `tasks/result` and GET, A2A streams
   * and blocking sends), per tenant and in all; default: `defaultStreamLimits()` (from the
   * process's open-file limit).
   */
  streams?: StreamLimits;
  /**
   * HTTP workers (decision 62): their keys (`LONGRUN_WORKER_KEYS`, key → worker name) and the
   * lease broker the `/v1/worker/*` routes call. Without keys every worker route answers `401`
   * (`403` to a tenant key).
   */
  workers?: {
    keys: ApiKeys;
    leases: LeaseBroker;
    maxResultBytes: number;
    /** Requests per second per worker key, in each API process; 0 or unset: no limit. */
    rateLimitRps?: number | undefined;
    /** The job types a worker may register, by worker name, when its key's entry lists them. */
    allowedTypes?: ReadonlyMap<string, ReadonlySet<string>> | undefined;
  };
}

/**
 * Builds the HTTP app from its dependencies; `main.ts` wires real ones, tests do the same.
 * @example const app = createApp({ engine, keys, logger, ...limits }); app.listen(3000)
 */
export function createApp(deps: AppDeps): Express {
  return buildApp(deps).app;
}

/**
 * The server's request listener: the app, behind the fast lane for submits unless a rate limit
 * is configured (the lane does not run the limiter) or `fastLane` is false.
 * @example createServer(createListener({ engine, keys, logger, ...limits })).listen(3000)
 */
export function createListener(deps: AppDeps): RequestListener {
  const { app, observe, workerLimiter } = buildApp(deps);
  if (deps.fastLane === false || deps.rateLimitRps > 0) return app;
  const lane = fastLane(app, {
    engine: deps.engine,
    keys: deps.keys,
    logger: deps.logger,
    observe,
    workers: deps.workers && { ...deps.workers, limiter: workerLimiter },
  });
  return (req, res) => {
    noSniff(res);
    lane(req, res);
  };
}

/**
 * Every answer says what it is and nothing else (issue 41): a browser never sniffs a JSON body,
 * a problem or an event stream into something it would run.
 */
function noSniff(res: ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
}

function buildApp(deps: AppDeps): {
  app: Express;
  observe: RequestObserver;
  workerLimiter: WorkerLimiter | undefined;
} {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use((_req, res, next) => {
    noSniff(res);
    next();
  });
  const metrics = new ApiMetrics(
    deps.engine,
    { tenants: deps.keys.tenants, maxBytes: () => deps.engine.tenantMaxBytes },
    // Every path a router is mounted at below: the route labels' fixed set (see routeLabel).
    [JSONRPC_PATH, REST_PATH, ADMIN_QUEUES_PATH],
  );

  // HTTP workers' runs, counted as an SDK worker counts its own.
  deps.workers?.leases.observe(new RunMetrics(metrics.registry));

  const observe: RequestObserver = (req, res, seconds, route) =>
    metrics.observe(req, res, seconds, route);
  app.use(requestLog(deps.logger, observe));

  // The task routes first: they carry nearly all the traffic, so no other router is walked.
  const limits =
    deps.rateLimitRps > 0 ? [rateLimit(deps.engine.rateLimiter(deps.rateLimitRps))] : [];
  // Authentication and limits run first in each task route.
  const before = [requireTenant(deps.keys, deps.workers?.keys), ...limits];
  // One count of open streams for every door (http/stream-slots.ts).
  const streams = new StreamSlots(deps.streams ?? defaultStreamLimits());
  addReplayRoutes(app, deps.engine, before);
  addJobRoutes(app, deps.engine, before, deps.logger, streams);
  addJobTypeRoutes(app, deps.engine, before);
  addScheduleRoutes(app, deps.engine, before);
  // The worker routes take a worker key, never a tenant's (and a tenant's limits do not apply).
  const workerKeys = deps.workers?.keys ?? new ApiKeys(new Map());
  // Each worker key's own request limit (issue 41), shared with the fast lane's lease calls.
  const rps = deps.workers?.rateLimitRps ?? 0;
  const workerLimiter = rps > 0 ? new WorkerLimiter(rps) : undefined;
  addWorkerRoutes(
    app,
    {
      engine: deps.engine,
      leases: deps.workers?.leases,
      maxResultBytes: deps.workers?.maxResultBytes ?? 0,
      allowedTypes: deps.workers?.allowedTypes,
    },
    [
      requireWorker(workerKeys, deps.keys),
      ...(workerLimiter ? [workerRateLimit(workerLimiter)] : []),
    ],
  );
  addWaitpointRoutes(app, deps.engine, before);
  addStepRoutes(app, deps.engine, before);
  // The MCP door: the same engine and keys, 2025-11-25 (SDK) and Tasks V2 on one endpoint.
  mountMcp(app, {
    engine: deps.engine,
    before,
    maxTtlMs: deps.maxTtlMs,
    logger: deps.logger,
    streams,
    conformance: deps.mcpConformance ?? false,
  });
  // The A2A door: its Agent Card without a key, everything under /a2a with one.
  app.use(a2aRouter(deps.engine, before, deps.logger, streams, deps.a2aDefaultSkill));
  app.use(healthRouter(deps.engine, metrics.registry));
  if (deps.adminKeys?.length) {
    app.use(adminRouter(deps.engine, deps.adminKeys, deps.adminReadOnly ?? true));
  }
  app.use(
    docsRouter({
      maxTtlMs: deps.maxTtlMs,
      minEveryMs: deps.engine.scheduleMinEveryMs,
      jobTypes: () => deps.engine.knownJobTypes,
    }),
  );
  // The task console (static files; the page calls the task routes with the tenant's key).
  app.use(consoleRouter());
  // What each problem's `type` resolves to.
  app.use(problemsRouter());
  // `GET /`: where to go from here (the docs, the document, the task routes).
  app.use(indexRouter());
  // A documented path asked with a method it does not answer: 405 with Allow, not the 404.
  const documented = buildOpenApiDocument({ maxTtlMs: deps.maxTtlMs, jobTypes: [] });
  app.use(methodNotAllowed(documented.paths as Record<string, unknown>));
  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return { app, observe, workerLimiter };
}
