import type { IRouter, NextFunction, Request, RequestHandler, Response } from 'express';
import { fieldErrors, Problem } from '@longrun/core';
import { answerLeases } from './worker-leases.js';
import { finishProblem, invalid, notAllowed, parse, typeOwned } from './worker-problems.js';
import type { FinishOutcome, LeaseBroker, TaskEngine } from '@longrun/engine';
import { jsonBody } from '../http/json-body.js';
import { leaseProblem } from '../http/outcomes.js';
import { mount } from '../openapi/operation.js';
import { jobTypeView } from './job-types.js';
import {
  askInput,
  completeLease,
  completeRequestSchema,
  failLease,
  failRequestSchema,
  heartbeatLease,
  heartbeatRequestSchema,
  inputRequestSchema,
  jobTypeNameSchema,
  leaseJobs,
  registerJobTypeRequestSchema,
  registerWorkerJobType,
  removeWorkerJobType,
  WORKER_PATH,
} from './worker.operations.js';

/** Room for the rest of a completion's body around a result of the largest size allowed. */
const COMPLETION_OVERHEAD_BYTES = 64 * 1024;
/** The largest input schema a worker may register (issue 41): its JSON, in bytes. */
const MAX_SCHEMA_BYTES = 64 * 1024;

/**
 * The `/v1/worker/*` routes (decision 62): HTTP workers register job types, lease jobs, heartbeat
 * and finish them. Thin, as the task routes: each parses what is HTTP's, calls the lease broker
 * and answers its outcome (`leaseProblem`). `before` authenticates a worker key (a tenant's is
 * `403`); it runs first on every one of them, and on any other path under `/v1/worker`.
 */
export function addWorkerRoutes(
  router: IRouter,
  deps: {
    engine: TaskEngine;
    leases: LeaseBroker | undefined;
    maxResultBytes: number;
    allowedTypes?: ReadonlyMap<string, ReadonlySet<string>> | undefined;
  },
  before: RequestHandler[],
): void {
  // Without a broker no worker key exists, so no handler below is reached.
  const leases = deps.leases ?? noBroker();
  const workerOf = (res: Response) => res.locals.worker as string;

  mount<{ name: string }>(
    router,
    registerWorkerJobType,
    ...before,
    jsonBody(),
    async (req, res) => {
      const name = jobTypeNameSchema.safeParse(req.params.name);
      if (!name.success)
        throw invalid('The job type name is invalid', fieldErrors(name.error, 'name'));
      const allowed = deps.allowedTypes?.get(workerOf(res));
      if (allowed && !allowed.has(name.data)) throw notAllowed(name.data);
      const body = parse(registerJobTypeRequestSchema, req.body);
      const schemaBytes = Buffer.byteLength(JSON.stringify(body.inputSchema));
      if (schemaBytes > MAX_SCHEMA_BYTES) {
        throw new Problem({
          status: 413,
          title: 'Schema too large',
          detail: `The input schema is ${schemaBytes} bytes of JSON; at most ${MAX_SCHEMA_BYTES}`,
          code: 'schema-too-large',
        });
      }
      const fault = leases.schemaFault(body.inputSchema);
      if (fault)
        throw invalid('The input schema cannot be used', [{ path: 'inputSchema', message: fault }]);
      const registered = await leases.register(workerOf(res), { name: name.data, ...body });
      if (registered.kind === 'owned') throw typeOwned(registered.name, 409);
      if (registered.kind === 'tooMany') {
        throw new Problem({
          status: 409,
          title: 'Too many job types',
          detail: `This worker key owns ${registered.max} job types, as many as LONGRUN_WORKER_MAX_TYPES allows`,
          code: 'too-many-job-types',
        });
      }
      const type = (await deps.engine.jobTypes()).find((t) => t.name === name.data);
      if (!type) throw new Error(`job type ${name.data} registered but not read back`);
      res.setHeader('Cache-Control', 'no-store');
      res.json(jobTypeView(type));
    },
  );

  mount<{ name: string }>(router, removeWorkerJobType, ...before, async (req, res) => {
    const removed = await leases.jobTypes.unregister(workerOf(res), req.params.name);
    // Not registered, or registered by another key: not this key's to remove, either way.
    if (removed.kind === 'owned' || removed.kind === 'unknown') {
      throw typeOwned(req.params.name, 403);
    }
    if (removed.kind === 'busy') {
      throw new Problem({
        status: 409,
        title: 'Job type in use',
        detail: `Tasks of "${req.params.name}" are waiting or running: run or cancel them first`,
        code: 'job-type-in-use',
      });
    }
    res.status(204).end();
  });

  mount(router, leaseJobs, ...before, jsonBody(), (req, res) =>
    answerLeases(leases, workerOf(res), req.body, res),
  );

  mount<{ leaseId: string }>(
    router,
    heartbeatLease,
    ...before,
    jsonBody({ optional: true }),
    async (req, res) => {
      const outcome = await leases.runs.heartbeat(
        workerOf(res),
        req.params.leaseId,
        parse(heartbeatRequestSchema, req.body),
      );
      if (outcome.kind !== 'ok') throw leaseProblem(outcome);
      res.json({ cancelled: outcome.cancelled, leaseMs: outcome.leaseMs });
    },
  );

  // A result over the cap fails the task, even one whose body is too large to read.
  const completionLimit =
    deps.maxResultBytes > 0 ? deps.maxResultBytes + COMPLETION_OVERHEAD_BYTES : 512 * 1024 * 1024;
  mount<{ leaseId: string }>(
    router,
    completeLease,
    ...before,
    jsonBody({ limitBytes: completionLimit }),
    async (err: unknown, req: Request<{ leaseId: string }>, res: Response, next: NextFunction) => {
      const tooLarge =
        (err instanceof Problem && err.code === 'entity-too-large') ||
        (err as { type?: unknown } | null)?.type === 'entity.too.large';
      if (!tooLarge) return next(err);
      const bytes = Number(req.headers['content-length'] ?? 0);
      const outcome = await leases.runs.refuseLarge(workerOf(res), req.params.leaseId, bytes);
      next(outcome.kind === 'ok' ? err : finishProblem(outcome));
    },
    async (req: Request<{ leaseId: string }>, res: Response) => {
      const { result } = parse(completeRequestSchema, req.body);
      answer(res, await leases.runs.complete(workerOf(res), req.params.leaseId, result));
    },
  );

  mount<{ leaseId: string }>(router, failLease, ...before, jsonBody(), async (req, res) => {
    const { error, retry } = parse(failRequestSchema, req.body);
    answer(res, await leases.runs.fail(workerOf(res), req.params.leaseId, { ...error, retry }));
  });

  mount<{ leaseId: string }>(router, askInput, ...before, jsonBody(), async (req, res) => {
    const request = parse(inputRequestSchema, req.body);
    answer(res, await leases.runs.input(workerOf(res), req.params.leaseId, request));
  });

  // Any other path or method under /v1/worker: authenticated first, then the app's 404 or 405.
  router.use(WORKER_PATH, ...before);
}

function answer(res: Response, outcome: FinishOutcome): void {
  if (outcome.kind !== 'ok') throw finishProblem(outcome);
  res.json({ taskId: outcome.taskId, status: outcome.status });
}

function noBroker(): LeaseBroker {
  return new Proxy({} as LeaseBroker, {
    get() {
      throw new Error('HTTP workers are not set up in this app (AppDeps.workers)');
    },
  });
}
