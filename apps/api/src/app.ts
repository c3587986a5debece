import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from 'pino';
import type { JobCatalog } from '@longrun/core';
import type { TaskEvents, TaskQueue, WebhookTargetPolicy } from '@longrun/queue';
import { requireTenant, type ApiKeys } from './http/auth.js';
import { ApiMetrics } from './http/metrics.js';
import { rateLimit } from './http/rate-limit.js';
import { errorHandler, notFound } from './http/problem.js';
import { docsRouter } from './routes/docs.js';
import { ADMIN_QUEUES_PATH, adminRouter } from './routes/admin.js';
import { healthRouter } from './routes/health.js';
import { jobsRouter } from './routes/jobs.js';
import { TaskService } from './services/task-service.js';
import { TaskStream } from './services/task-stream.js';

export interface AppDeps {
  tasks: TaskQueue;
  /** Process-wide wake-ups for SSE and long polls (one subscriber connection). */
  events: TaskEvents;
  webhookPolicy: WebhookTargetPolicy;
  catalog: JobCatalog;
  keys: ApiKeys;
  logger: Logger;
  pollIntervalMs: number;
  defaultTtlMs: number;
  maxTtlMs: number;
  redisTimeoutMs: number;
  /** Requests per second per tenant; 0 = no limit. */
  rateLimitRps: number;
  /** Non-terminal tasks per tenant; 0 = no cap. */
  maxOpenTasks: number;
  /** Keys for `/admin/queues` (bull-board); empty: not mounted. */
  adminKeys?: readonly string[];
  /** bull-board read-only (default true). */
  adminReadOnly?: boolean;
}

/**
 * Builds the HTTP app from its dependencies; `main.ts` wires real ones, tests do the same.
 * @example const app = createApp({ tasks, catalog, keys, logger, ...limits }); app.listen(3000)
 */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  const metrics = new ApiMetrics(deps.tasks, deps.redisTimeoutMs);
  const service = new TaskService(deps);
  const stream = new TaskStream(deps);

  app.use(metrics.middleware);
  app.use(
    pinoHttp({
      logger: deps.logger,
      // A caller's X-Request-Id is kept (and echoed), so one id follows a task into the worker logs.
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id =
          typeof given === 'string' && /^[\x21-\x7e]{1,128}$/.test(given) ? given : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      customLogLevel: (_req, res, err) =>
        err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      autoLogging: {
        ignore: (req) =>
          ['/healthz', '/readyz', '/metrics'].includes(req.url ?? '') ||
          (req.url ?? '').startsWith(ADMIN_QUEUES_PATH),
      },
      serializers: {
        req: (req: { id: unknown; method: string; url: string }) => ({
          id: req.id,
          method: req.method,
          url: req.url,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );
  app.use(healthRouter(deps.tasks, metrics.registry, deps.redisTimeoutMs));
  if (deps.adminKeys?.length) {
    const queues = [...deps.tasks.queues.values(), deps.tasks.webhookQueue];
    app.use(adminRouter(queues, deps.adminKeys, deps.adminReadOnly ?? true));
  }
  app.use(docsRouter(deps));
  app.use(
    '/v1/jobs',
    requireTenant(deps.keys),
    rateLimit(deps.tasks.redis, deps.tasks.prefix, deps.rateLimitRps),
    jobsRouter(service, stream),
  );
  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
