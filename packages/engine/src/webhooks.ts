import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  handleAt,
  callbackTargets,
  isA2APush,
  type CallbackTarget,
  type TaskEvent,
  type TaskRecord,
} from '@longrun/core';
import { WEBHOOK_QUEUE_NAME } from './keys.js';
import { TaskLog } from './task-log.js';
import { TaskStore } from './task-store.js';
import type { TaskWorkerLogger } from './worker/job-data.js';
import { REFUSED_TARGET, type WebhookTargetPolicy } from './webhook-target.js';
import { a2aDelivery, webhookDelivery } from './webhook-payloads.js';
import { post } from './webhook-post.js';
import { activeTracer } from './tracing/tracer.js';
import { traceDelivery } from './tracing/spans.js';
import { OutboxRelay } from './webhook-relay.js';

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'dropped';

export interface WebhookDispatcherOptions {
  /** Worker-role connection for BullMQ and the task store. */
  connection: Redis;
  /** A connection of its own: the outbox relay blocks on it (XREADGROUP … BLOCK). */
  relayConnection: Redis;
  prefix: string;
  /** The configured prefix when `prefix` is a shard's (its channels are shared; see `taskKeys`). */
  channelPrefix?: string | undefined;
  maxTtlMs: number;
  pollIntervalMs: number;
  policy: WebhookTargetPolicy;
  logger: TaskWorkerLogger;
  concurrency?: number;
  attempts?: number;
  /** Bound on one delivery's whole exchange: connect, send, status line and headers (10 s). */
  timeoutMs?: number | undefined;
  /**
   * Deliveries one tenant may have in flight in this process (default 4): a tenant's slow or
   * failing receivers hold at most this many of the `concurrency` slots; its other deliveries
   * wait (delayed, attempts untouched) while other tenants' go ahead.
   */
  perTenant?: number | undefined;
  /** Unique per process; names this relay in the outbox's consumer group. */
  consumerName: string;
  /**
   * A consumer of the group idle this long with nothing pending is a relay that died: it is
   * removed (default 60 s; a live relay reads every second).
   */
  deadConsumerMs?: number;
  onDelivery?: (outcome: DeliveryOutcome) => void;
}

/**
 * Delivers webhooks at least once. Status changes land in the outbox stream atomically with the
 * change itself (`lua/includes/write-event.lua`); a relay (`OutboxRelay`) moves them into a BullMQ queue
 * (deterministic job ids, so a relay that crashes after adding but before acking adds nothing
 * twice) and a BullMQ worker
 * POSTs them, retrying with exponential backoff. What is POSTed follows the task's callback as it
 * is at delivery: longrun's `task.updated` with the handle (signed with the callback's secret), or
 * for an A2A push notification config the A2A task (`toA2ATask`) with the config's token.
 */
export class WebhookDispatcher {
  readonly queue: Queue;
  readonly worker: Worker;
  private readonly store: TaskStore;
  private readonly log: TaskLog;
  private readonly relay: OutboxRelay;
  /** Deliveries in flight in this process, by tenant. */
  private readonly inFlight = new Map<string, number>();
  /** How often each delivery was held back for its tenant's share (bounded, see `deferral`). */
  private readonly deferrals = new Map<string, number>();

  constructor(private readonly opts: WebhookDispatcherOptions) {
    this.store = new TaskStore(opts.connection, opts.prefix, opts.maxTtlMs, opts.channelPrefix);
    this.log = new TaskLog(opts.connection, this.store.keys);
    this.queue = new Queue(WEBHOOK_QUEUE_NAME, {
      connection: opts.connection,
      prefix: opts.prefix,
    });
    this.queue.on('error', () => undefined);
    this.relay = new OutboxRelay({
      connection: opts.relayConnection,
      outbox: this.store.keys.outbox,
      queue: this.queue,
      attempts: opts.attempts ?? 10,
      consumerName: opts.consumerName,
      deadConsumerMs: opts.deadConsumerMs ?? 60_000,
      logger: opts.logger,
    });
    this.worker = new Worker(
      WEBHOOK_QUEUE_NAME,
      (job: Job, token?: string) => this.take(job, token),
      {
        connection: opts.connection,
        prefix: opts.prefix,
        concurrency: opts.concurrency ?? 16,
        autorun: false,
      },
    );
    this.worker.on('error', (err) => opts.logger.warn({ err }, 'webhook worker error'));
    this.worker.on('failed', (job, err) => {
      const final =
        !job || job.attemptsMade >= (job.opts.attempts ?? 1) || err instanceof UnrecoverableError;
      opts.onDelivery?.(final ? 'failed' : 'retrying');
      opts.logger.warn({ deliveryId: job?.id, err: err.message, final }, 'webhook delivery failed');
    });
  }

  async start(): Promise<void> {
    await this.relay.start();
    void this.worker.run();
    await this.worker.waitUntilReady();
  }

  async close(): Promise<void> {
    await this.relay.stop();
    await this.worker.close();
    await this.queue.close();
    // A relay that leaves with nothing pending leaves the group too (a crashed one is pruned).
    await this.relay.leave().catch(() => undefined);
  }

  /** Runs a delivery unless its tenant already has its share of the slots in flight here. */
  private async take(job: Job<{ taskId: string; eventId: string }>, token?: string) {
    // The share check reads two small fields, not the record (its input and result may be MiBs).
    const owner = await this.store.owner(job.data.taskId);
    if (!owner?.hasCallback) return this.dropped();
    const tenant = owner.tenant;
    const busy = this.inFlight.get(tenant) ?? 0;
    if (busy >= (this.opts.perTenant ?? 4)) {
      // Let other tenants' deliveries have the slot; this one waits its turn (attempts untouched),
      // longer each time, so a long backlog behind slow receivers does not spin.
      await job.moveToDelayed(Date.now() + this.deferral(job.id ?? ''), token);
      throw new DelayedError();
    }
    this.deferrals.delete(job.id ?? '');
    this.inFlight.set(tenant, busy + 1);
    try {
      const record = await this.store.get(job.data.taskId);
      const targets = callbackTargets(record?.callback);
      if (!record || targets.length === 0) return this.dropped();
      const [only] = targets;
      if (targets.length === 1 && only) return await this.deliver(job, record, only);
      // Several A2A push configs: each is sent the change; a failure retries the job, so those
      // already reached may be sent it again (push notifications are at least once).
      const sent = await Promise.allSettled(targets.map((t) => this.deliver(job, record, t)));
      const failed = sent.find((s) => s.status === 'rejected');
      if (failed) throw failed.reason;
      return 'delivered';
    } finally {
      const left = (this.inFlight.get(tenant) ?? 1) - 1;
      if (left > 0) this.inFlight.set(tenant, left);
      else this.inFlight.delete(tenant);
    }
  }

  private dropped(): DeliveryOutcome {
    this.opts.onDelivery?.('dropped'); // expired or forgotten: nobody to tell about it
    return 'dropped';
  }

  /** 0.5 s, 1 s, 2 s … up to 30 s (with jitter) for a delivery held back again and again. */
  private deferral(jobId: string): number {
    const times = (this.deferrals.get(jobId) ?? 0) + 1;
    if (this.deferrals.size >= 10_000) this.deferrals.clear(); // bounded; a reset only shortens
    this.deferrals.set(jobId, times);
    const base = Math.min(30_000, 500 * 2 ** Math.min(times - 1, 6));
    return base / 2 + Math.floor(Math.random() * (base / 2));
  }

  private async deliver(
    job: Job<{ taskId: string; eventId: string }>,
    record: TaskRecord,
    callback: CallbackTarget,
  ): Promise<DeliveryOutcome> {
    const { taskId, eventId } = job.data;
    const refused = this.opts.policy.refuseUrl(callback.url);
    if (refused) throw new UnrecoverableError(`callback URL ${refused}`);
    const event: TaskEvent = (await this.log.event(taskId, eventId)) ?? {
      id: eventId,
      status: record.status,
      statusMessage: record.statusMessage,
      updatedAt: record.updatedAt,
    };
    const deliveryId = job.id ?? `${taskId}_${eventId}`;
    const task = handleAt(record, event, this.opts.pollIntervalMs);
    const { body, headers } = isA2APush(callback)
      ? a2aDelivery(deliveryId, task, callback)
      : webhookDelivery(deliveryId, event, task, callback);
    const send = (traceHeaders?: Record<string, string>): Promise<number> =>
      post(callback.url, body, traceHeaders ? { ...headers, ...traceHeaders } : headers, {
        lookup: this.opts.policy.lookup,
        timeoutMs: this.opts.timeoutMs ?? 10_000,
      }).catch((error: NodeJS.ErrnoException) => {
        // Refused after resolving (no connection was made): final, like a refusal by name above.
        // Retrying would ask the same resolver 10 times over 17 minutes for the same answer.
        if (error.code === REFUSED_TARGET) throw new UnrecoverableError(error.message);
        throw error;
      });
    // Traced (an OpenTelemetry SDK is on): a span in the task's trace, its `traceparent` sent.
    const tracer = activeTracer();
    const facts = { taskId, eventId, url: callback.url, parent: record.traceparent };
    const status = await (tracer ? traceDelivery(tracer, facts, send) : send());
    if (status === 410) throw new UnrecoverableError('receiver answered 410 Gone');
    if (status < 200 || status >= 300) throw new Error(`receiver answered ${status}`);
    this.opts.onDelivery?.('delivered');
    return 'delivered';
  }
}
