import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  A2A_CONTENT_TYPE,
  A2A_TOKEN_HEADER,
  handleAt,
  isA2APush,
  toA2ATask,
  WEBHOOK_HEADERS,
  webhookSignature,
  type A2APushTarget,
  type A2AStreamResponse,
  type Callback,
  type CallbackTarget,
  type TaskEvent,
  type TaskHandle,
  type TaskRecord,
  type WebhookPayload,
} from '@longrun/core';
import { WEBHOOK_QUEUE_NAME } from './keys.js';
import { TaskLog } from './task-log.js';
import { TaskStore } from './task-store.js';
import type { TaskWorkerLogger } from './worker/job-data.js';
import { REFUSED_TARGET, type WebhookTargetPolicy } from './webhook-target.js';

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

const GROUP = 'relay';
const USER_AGENT = 'longrun-webhooks/1';

/**
 * Delivers webhooks at least once. Status changes land in the outbox stream atomically with the
 * change itself (see scripts.ts); this relay moves them into a BullMQ queue (deterministic job ids,
 * so a relay that crashes after adding but before acking adds nothing twice) and a BullMQ worker
 * POSTs them, retrying with exponential backoff. What is POSTed follows the task's callback as it
 * is at delivery: longrun's `task.updated` with the handle (signed with the callback's secret), or
 * for an A2A push notification config the A2A task (`toA2ATask`) with the config's token.
 */
export class WebhookDispatcher {
  readonly queue: Queue;
  readonly worker: Worker;
  private readonly store: TaskStore;
  private readonly log: TaskLog;
  private running = false;
  /** Deliveries in flight in this process, by tenant. */
  private readonly inFlight = new Map<string, number>();
  /** How often each delivery was held back for its tenant's share (bounded, see `deferral`). */
  private readonly deferrals = new Map<string, number>();
  private loop: Promise<void> | undefined;

  constructor(private readonly opts: WebhookDispatcherOptions) {
    this.store = new TaskStore(opts.connection, opts.prefix, opts.maxTtlMs, opts.channelPrefix);
    this.log = new TaskLog(opts.connection, this.store.keys);
    this.queue = new Queue(WEBHOOK_QUEUE_NAME, {
      connection: opts.connection,
      prefix: opts.prefix,
    });
    this.queue.on('error', () => undefined);
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
    await this.createGroup();
    this.running = true;
    this.loop = this.relay();
    void this.worker.run();
    await this.worker.waitUntilReady();
  }

  async close(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.worker.close();
    await this.queue.close();
    // A relay that leaves with nothing pending leaves the group too (a crashed one is pruned).
    await this.pruneConsumers(0, true).catch(() => undefined);
  }

  /**
   * Makes the outbox's consumer group (and the stream) unless it is there. Reading from the start
   * of the stream: entries a task script added before the group existed (Redis came back empty,
   * then a status change) are relayed too.
   */
  private async createGroup(): Promise<void> {
    try {
      await this.opts.relayConnection.xgroup(
        'CREATE',
        this.store.keys.outbox,
        GROUP,
        '0',
        'MKSTREAM',
      );
    } catch (error) {
      if (!/BUSYGROUP/.test((error as Error).message)) throw error;
    }
  }

  /**
   * Removes consumers of the group with nothing pending that have been idle for `idleMs` (this
   * relay's own only when `self`): every restart names a new consumer, so without this the
   * group would collect one per process start for ever.
   */
  private async pruneConsumers(idleMs: number, self = false): Promise<void> {
    const redis = this.opts.relayConnection;
    const outbox = this.store.keys.outbox;
    const consumers = (await redis.xinfo('CONSUMERS', outbox, GROUP)) as (string | number)[][];
    for (const flat of consumers) {
      const info = Object.fromEntries(
        Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i], flat[2 * i + 1]]),
      ) as { name: string; pending: number; idle: number };
      const mine = info.name === this.opts.consumerName;
      if (mine !== self || info.pending > 0 || info.idle < idleMs) continue;
      await redis.xgroup('DELCONSUMER', outbox, GROUP, info.name);
    }
  }

  /** Moves outbox entries into the delivery queue; reclaims entries a dead relay left pending. */
  private async relay(): Promise<void> {
    const redis = this.opts.relayConnection;
    const outbox = this.store.keys.outbox;
    let lastClaim = 0;
    while (this.running) {
      try {
        if (Date.now() - lastClaim > 10_000) {
          lastClaim = Date.now();
          const [, claimed] = (await redis.xautoclaim(
            outbox,
            GROUP,
            this.opts.consumerName,
            30_000,
            '0-0',
            'COUNT',
            100,
          )) as [string, [string, string[]][]];
          await this.forward(claimed);
          await this.pruneConsumers(this.opts.deadConsumerMs ?? 60_000);
        }
        const reply = (await redis.xreadgroup(
          'GROUP',
          GROUP,
          this.opts.consumerName,
          'COUNT',
          100,
          'BLOCK',
          1000,
          'STREAMS',
          outbox,
          '>',
        )) as [string, [string, string[]][]][] | null;
        await this.forward(reply?.[0]?.[1] ?? []);
      } catch (error) {
        if (!this.running) break;
        if (/^NOGROUP\b/.test((error as Error).message)) {
          // Redis lost its data (a failover to an empty replica, a restart without persistence):
          // the group went with it. Made again, the relay goes on; until then no webhook moves.
          const made = await this.createGroup().then(
            () => true,
            (err: unknown) => {
              this.opts.logger.warn({ err }, 'webhook outbox group not made again yet; retrying');
              return false;
            },
          );
          if (made) {
            this.opts.logger.info(
              { outbox },
              'webhook outbox group was gone (Redis lost its data): made again',
            );
            continue;
          }
        } else {
          this.opts.logger.warn({ err: (error as Error).message }, 'webhook relay error; retrying');
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  private async forward(entries: [string, string[]][]): Promise<void> {
    if (entries.length === 0) return;
    const attempts = this.opts.attempts ?? 10;
    await this.queue.addBulk(
      entries.map(([, flat]) => {
        const fields = Object.fromEntries([0, 2].map((i) => [flat[i], flat[i + 1]]));
        const taskId = fields.task ?? '';
        const eventId = fields.event ?? '';
        return {
          name: 'deliver',
          data: { taskId, eventId },
          opts: {
            jobId: `${taskId}_${eventId}`,
            attempts,
            backoff: { type: 'exponential', delay: 1000 },
            removeOnComplete: true,
            removeOnFail: { age: 7 * 86_400 },
          },
        };
      }),
    );
    const ids = entries.map(([id]) => id);
    await this.opts.relayConnection
      .multi()
      .xack(this.store.keys.outbox, GROUP, ...ids)
      .xdel(this.store.keys.outbox, ...ids)
      .exec();
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
      if (!record?.callback) return this.dropped();
      return await this.deliver(job, record, record.callback);
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
    const status = await post(callback.url, body, headers, {
      lookup: this.opts.policy.lookup,
      timeoutMs: this.opts.timeoutMs ?? 10_000,
    }).catch((error: NodeJS.ErrnoException) => {
      // Refused after resolving (no connection was made): final, like a refusal by name above.
      // Retrying would ask the same resolver 10 times over 17 minutes for the same answer.
      if (error.code === REFUSED_TARGET) throw new UnrecoverableError(error.message);
      throw error;
    });
    if (status === 410) throw new UnrecoverableError('receiver answered 410 Gone');
    if (status < 200 || status >= 300) throw new Error(`receiver answered ${status}`);
    this.opts.onDelivery?.('delivered');
    return 'delivered';
  }
}

interface Delivery {
  body: string;
  headers: Record<string, string>;
}

/** longrun's webhook: `task.updated` with the handle, HMAC-signed when the callback has a secret. */
function webhookDelivery(
  deliveryId: string,
  event: TaskEvent,
  task: TaskHandle,
  callback: Callback,
): Delivery {
  const payload: WebhookPayload = {
    id: deliveryId,
    type: 'task.updated',
    createdAt: new Date(event.updatedAt).toISOString(),
    task,
  };
  const body = JSON.stringify(payload);
  const timestamp = Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [WEBHOOK_HEADERS.deliveryId]: payload.id,
    [WEBHOOK_HEADERS.timestamp]: String(timestamp),
  };
  if (callback.secret) {
    headers[WEBHOOK_HEADERS.signature] = webhookSignature(callback.secret, timestamp, body);
  }
  return { body, headers };
}

/**
 * An A2A push notification: a `StreamResponse` carrying the A2A task as it was at the change,
 * with the config's `token` in `X-A2A-Notification-Token` and its `authentication` as
 * `Authorization`. The delivery id (the same on every retry) and the time are sent as for a
 * webhook, so a receiver can drop duplicates; there is no signature (A2A has no secret).
 */
function a2aDelivery(deliveryId: string, task: TaskHandle, target: A2APushTarget): Delivery {
  const payload: A2AStreamResponse = { task: toA2ATask(task) };
  const headers: Record<string, string> = {
    'content-type': A2A_CONTENT_TYPE,
    'user-agent': USER_AGENT,
    [WEBHOOK_HEADERS.deliveryId]: deliveryId,
    [WEBHOOK_HEADERS.timestamp]: String(Math.floor(Date.now() / 1000)),
  };
  if (target.token) headers[A2A_TOKEN_HEADER] = target.token;
  if (target.authentication) {
    const { scheme, credentials } = target.authentication;
    headers.authorization = `${scheme} ${credentials}`;
  }
  return { body: JSON.stringify(payload), headers };
}

/**
 * POSTs `body`; resolves with the status code once the status line and headers are in. The whole
 * exchange is bounded by `timeoutMs`, not just idle time: a receiver that trickles bytes cannot
 * hold a delivery slot past it. `lookup` vets addresses before connecting.
 */
function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: { lookup: WebhookTargetPolicy['lookup']; timeoutMs: number },
): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = request(url, { method: 'POST', headers, lookup: opts.lookup }, (res) => {
      clearTimeout(bound);
      resolve(res.statusCode ?? 0);
      // The body does not matter: drain what comes quickly, then let the socket go.
      res.resume();
      res.on('error', () => undefined);
      setTimeout(() => res.destroy(), 1000).unref();
    });
    const bound = setTimeout(() => {
      const error = new Error(`no answer within ${opts.timeoutMs} ms`);
      req.destroy(error);
      reject(error);
    }, opts.timeoutMs);
    req.on('error', (error) => {
      clearTimeout(bound);
      reject(error);
    });
    req.end(body);
  });
}
