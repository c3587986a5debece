import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { CompletionBatch } from '../completion-batch.js';
import type { RegisteredJobType } from '../registry/job-type-registry.js';
import type { JobTypeDirectory } from '../registry/job-type-directory.js';
import type { JsonJobTypeSpec } from '../registry/describe.js';
import { WorkerTypes, type RegisterOutcome } from './worker-types.js';
import { taskKeys } from '../keys.js';
import { shardPrefix } from '../shards.js';
import { LeasedCompletions } from './leased-completions.js';
import { SchemaValidators } from '../validation/schema-validators.js';
import { TaskStore } from '../task-store.js';
import type { RunOutcome, TaskJobData, TaskWorkerLogger } from '../worker/job-data.js';
import { LeaseIds, leaseSecret, type LeaseRef } from './lease-id.js';
import type { LeasePuller } from './lease-puller.js';
import { fillFrom, makePuller, waitForJob } from './lease-pullers.js';
import { WorkerPresence } from './worker-presence.js';
import type { LeaseCompletion, LeaseObserver, LeaseTakeOutcome, LeaseView } from './lease-types.js';
import {
  LeaseRuns,
  attemptOf,
  runOf,
  type EndedRun,
  type FinishOutcome,
  type LeaseShard,
} from './lease-runs.js';

export interface LeaseBrokerOptions {
  /** The API's producer connection (fails fast): task records and the registry. */
  connection: Redis;
  /** A worker-role connection (waits for Redis): BullMQ's side of the leases. */
  workerConnection: Redis;
  prefix: string;
  shards: number;
  maxTtlMs: number;
  types: JobTypeDirectory;
  /** How long a lease lasts without a heartbeat (`LONGRUN_WORKER_LEASE_MS`). */
  leaseMs: number;
  /** Most job types one worker key may own (`LONGRUN_WORKER_MAX_TYPES`; default 50). */
  maxTypesPerWorker?: number | undefined;
  /** A result whose JSON is longer fails its task (`result-too-large`); 0: no cap. */
  maxResultBytes: number;
  logger: TaskWorkerLogger;
}

export type { LeaseCompletion, LeaseObserver, LeaseTakeOutcome, LeaseView } from './lease-types.js';

/**
 * Jobs for HTTP workers: registers their types in the job-type registry, hands out leases (one
 * run of one job each, taken with BullMQ's manual-processing API) and ends them (`LeaseRuns`).
 * The API's replicas share nothing in memory about a lease: its id names the job and its lock
 * token, BullMQ's lock is the lease, and every change goes to the task's record as an SDK
 * worker's would.
 */
export class LeaseBroker {
  readonly runs: LeaseRuns;
  /** The job types HTTP workers own: register, remove, and which a lease may name. */
  readonly jobTypes: WorkerTypes;
  private readonly pullers = new Map<string, LeasePuller>();
  private readonly shards: LeaseShard[] = [];
  private readonly presence: WorkerPresence;
  private turn = 0;
  private observer: LeaseObserver | undefined;
  private stopping = false;
  private ids: Promise<LeaseIds> | undefined;
  /** Compiles the JSON Schemas HTTP workers send, so one that cannot be used is a `400` now. */
  private readonly schemas: SchemaValidators;

  constructor(private readonly opts: LeaseBrokerOptions) {
    this.presence = new WorkerPresence(opts.types.registry, opts.logger);
    this.schemas = new SchemaValidators({ logger: opts.logger, max: 64 });
    this.jobTypes = new WorkerTypes({
      ...opts,
      presence: this.presence,
      maxTypesPerWorker: opts.maxTypesPerWorker ?? 50,
    });
    for (let n = 0; n < Math.max(1, opts.shards); n++) {
      const store = new TaskStore(
        opts.connection,
        shardPrefix(opts.prefix, n),
        opts.maxTtlMs,
        opts.prefix,
      );
      // Completions go on the worker connection, BullMQ's own: a completion's record write and
      // its job's finish then go out back to back, in that order, in one round trip.
      const onWorker = new TaskStore(
        opts.workerConnection,
        shardPrefix(opts.prefix, n),
        opts.maxTtlMs,
        opts.prefix,
      );
      const keys = taskKeys(shardPrefix(opts.prefix, n), opts.prefix);
      const leased = new LeasedCompletions(opts.workerConnection, keys);
      this.shards.push({ store, completions: new CompletionBatch(onWorker), leased });
    }
    this.runs = new LeaseRuns({
      leaseMs: opts.leaseMs,
      maxResultBytes: opts.maxResultBytes,
      types: opts.types,
      ids: () => this.leaseIds(),
      shard: (n) => this.shards[n],
      puller: (n, queue) => this.puller(n, queue),
      schemaFault: (schema) => this.schemaFault(schema),
      ended: (run, outcome) => this.ended(run, outcome),
    });
  }

  /** Reports each run's end and each first run's queue wait to `observer` (the API's metrics). */
  observe(observer: LeaseObserver): void {
    this.observer = observer;
  }

  get leaseMs(): number {
    return this.opts.leaseMs;
  }

  /**
   * Why `schema` cannot validate anything (ajv refuses to compile it), or null: an HTTP worker's
   * input or answer schema is checked when it is sent, not when a submit or an answer meets it.
   */
  schemaFault(schema: Record<string, unknown>): string | null {
    const { $schema: _dialect, ...rest } = schema;
    try {
      this.schemas.get(JSON.stringify(rest), rest, { schema: 'http worker' });
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  }

  /** Registers a job type `worker` owns or claims (`WorkerTypes.register`). */
  register(
    worker: string,
    spec: JsonJobTypeSpec & { concurrency?: number | undefined },
  ): Promise<RegisterOutcome> {
    return this.jobTypes.register(worker, spec);
  }

  /**
   * Up to `max` leases of jobs of `types`: those waiting now, or, with none, the first to come
   * within `waitMs` (then any more waiting at that moment). `signal` ends the wait early (the
   * client went away): a job taken after it goes back to its queue. `completions` are done first
   * (once the types are known good), each as `runs.complete` does it (decision 68); the finish
   * of one on a queue this call leases from takes that queue's next job in the same script, as
   * an SDK worker's does, while `max` leaves room.
   */
  async take(
    worker: string,
    req: { types: readonly string[]; max: number; waitMs: number },
    signal?: AbortSignal,
    completions?: readonly LeaseCompletion[],
  ): Promise<LeaseTakeOutcome> {
    const leasable = await this.jobTypes.leasable(worker, req.types);
    if (leasable.kind !== 'ok') return leasable;
    const { types } = leasable;
    this.presence.seen(worker, [...types.values()]);
    const ids = await this.leaseIds();
    const pullers: LeasePuller[] = [];
    const shardOf = new Map<LeasePuller, number>();
    for (let n = 0; n < this.shards.length; n++) {
      for (const queue of new Set([...types.values()].map((t) => t.queueName!))) {
        const puller = this.puller(n, queue);
        pullers.push(puller);
        shardOf.set(puller, n);
      }
    }
    const leases: LeaseView[] = [];
    const open = async (job: Job, token: string, puller: LeasePuller) => {
      const sign = (ref: LeaseRef) => ids.encode(worker, ref);
      const lease = await this.open(job, token, puller, shardOf.get(puller)!, types, sign);
      if (lease) leases.push(lease);
    };
    let finished: FinishOutcome[] | undefined;
    if (completions) {
      let room = req.max;
      const fetch = (puller: LeasePuller) => shardOf.has(puller) && room-- > 0;
      finished = await Promise.all(
        completions.map((c) => this.runs.complete(worker, c.leaseId, c.result, fetch)),
      );
      await Promise.all(
        finished.map((f) =>
          f.kind === 'ok' && f.next ? open(f.next.job, f.next.token, f.next.puller) : null,
        ),
      );
    }
    await fillFrom(pullers, this.turn++, req.max, leases, open);
    const deadline = Date.now() + req.waitMs;
    while (leases.length === 0 && Date.now() < deadline && !signal?.aborted && !this.stopping) {
      const got = await waitForJob(pullers, deadline - Date.now(), signal);
      if (!got) break;
      await open(got.job, got.token, got.puller);
      if (leases.length > 0) await fillFrom(pullers, this.turn++, req.max, leases, open);
    }
    // Stopping, nothing taken: a 503 (an empty 200 would have its workers re-poll at once).
    if (this.stopping && leases.length === 0 && !finished) return { kind: 'stopping' };
    return { kind: 'ok', leases, ...(finished ? { completions: finished } : {}) };
  }

  /**
   * Long polls under way answer now, with what they have, and new ones do not wait: call it when
   * the API starts to stop, so its HTTP server is not held open by them.
   */
  stopWaiting(): void {
    this.stopping = true;
    for (const puller of this.pullers.values()) puller.endWaits();
  }

  async close(): Promise<void> {
    this.stopWaiting();
    await Promise.allSettled([...this.pullers.values()].map((p) => p.close()));
    this.pullers.clear();
  }

  /**
   * The lease of a job just taken, or null when there is nothing to run: a job of a type this
   * request did not ask for (two types on one named queue) goes back untouched; a task
   * cancelled, expired, forgotten or already finished is done with (as an SDK worker skips it).
   */
  private async open(
    job: Job,
    token: string,
    puller: LeasePuller,
    shard: number,
    types: ReadonlyMap<string, RegisteredJobType>,
    sign: (ref: LeaseRef) => string,
  ): Promise<LeaseView | null> {
    if (!types.has(job.name)) {
      await puller.giveBack(job, token);
      return null;
    }
    const { store } = this.shards[shard]!;
    const data = (job.data ?? {}) as TaskJobData & { traceparent?: unknown };
    const id = job.id ?? '';
    const now = Date.now();
    const first = job.attemptsMade === 0 && (job.attemptsStarted ?? 1) <= 1;
    let input: Record<string, unknown>;
    let answer: { value: unknown } | undefined;
    if (first && data.input !== undefined && data.expiresAt !== undefined) {
      // A first run takes its input from the job, as an SDK worker's does: no read of the record.
      if (data.expiresAt <= now) return this.skip(job, token);
      input = data.input;
    } else {
      const record = await store.start(id, { awaitingInput: false, started: true });
      if (!record) return this.skip(job, token);
      input = record.input;
      if (record.inputs.length > 0) answer = { value: record.inputs[record.inputs.length - 1] };
    }
    if (first && this.observer) {
      this.observer.onQueueWait(job.name, Math.max(0, now - job.timestamp - (job.opts.delay ?? 0)));
    }
    this.opts.logger.info(
      { taskId: id, type: job.name, attempt: attemptOf(job), requestId: data.requestId },
      'task leased',
    );
    // What completing needs of the run travels in the lease id, signed: a completion reads no job.
    const run = {
      type: job.name,
      startedAt: job.processedOn ?? now,
      timeoutMs: data.timeoutMs ?? this.opts.types.get(job.name)?.timeoutMs ?? 0,
      attempt: attemptOf(job),
    };
    return {
      leaseId: sign({ shard, queue: puller.queue, jobId: id, token, run }),
      taskId: id,
      type: job.name,
      input,
      attempt: attemptOf(job),
      ...(answer ? { answer: answer.value } : {}),
      leaseMs: this.opts.leaseMs,
      ...(typeof data.traceparent === 'string' ? { traceparent: data.traceparent } : {}),
    };
  }

  private async skip(job: Job, token: string): Promise<null> {
    await job.moveToCompleted(null, token, false);
    this.ended(runOf(job), 'skipped');
    return null;
  }

  private ended(run: EndedRun, outcome: RunOutcome): void {
    const { taskId, type, attempt } = run;
    const durationMs = Math.max(0, Date.now() - (run.startedAt ?? Date.now()));
    if (outcome !== 'skipped') {
      this.opts.logger.info(
        { taskId, type, attempt, outcome, durationMs },
        outcome === 'completed'
          ? 'task completed'
          : outcome === 'failed'
            ? 'task failed'
            : 'task run ended',
      );
    }
    this.observer?.onRun(type, outcome, durationMs);
  }

  /** The lease-id signer, once its secret is read (a failed read is tried again next call). */
  private leaseIds(): Promise<LeaseIds> {
    this.ids ??= leaseSecret(this.opts.connection, taskKeys(this.opts.prefix).leaseSecret).then(
      (secret) => new LeaseIds(secret),
      (error: unknown) => {
        this.ids = undefined;
        throw error;
      },
    );
    return this.ids;
  }

  private puller(shard: number, queue: string): LeasePuller {
    const key = `${shard} ${queue}`;
    let puller = this.pullers.get(key);
    if (!puller) {
      puller = makePuller(this.opts, shard, queue, this.shards[shard]!.store);
      this.pullers.set(key, puller);
    }
    return puller;
  }
}
