import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Redis } from 'ioredis';
import { ajvMessage } from '../engine/ajv-field-error.js';
import type { FieldError } from '../engine/outcomes.js';
import type { TaskWorkerLogger } from '../worker/job-data.js';
import { queueNameFor } from '../keys.js';
import { SchemaValidators } from '../validation/schema-validators.js';
import { JobTypeRegistry, type RegisteredJobType } from './job-type-registry.js';

export interface JobTypeDirectoryOptions {
  /** The connection the registry is read on (the engine's producer connection). */
  connection: Redis;
  prefix: string;
  /**
   * A subscriber connection: the directory re-reads the registry as soon as a worker announces
   * a change. Without one it re-reads every `refreshMs` only (and on a miss).
   */
  subscriber?: Redis | undefined;
  /** Re-read this often whatever happens, for live worker counts (default 5 s; 0 = never). */
  refreshMs?: number | undefined;
  /** A miss (unknown type) re-reads the registry at most this often (default 250 ms). */
  missRefreshMs?: number | undefined;
  logger?: TaskWorkerLogger | undefined;
}

/**
 * The job types tasks may have, as the API sees them: a cached copy of the registry (re-read
 * when a worker announces a change, periodically, and when a submit names a type it does not
 * know), with each input schema compiled once per version. Lookups on the submit path are
 * synchronous map reads.
 */
export class JobTypeDirectory {
  readonly registry: JobTypeRegistry;
  private types = new Map<string, RegisteredJobType>();
  /** Input schemas compiled, by type and version (formats checked, patterns in linear time). */
  private readonly validators: SchemaValidators;
  /** The versions whose schema did not compile: their inputs are left to the worker. */
  private readonly uncompiled = new Set<string>();
  private loading: Promise<void> | undefined;
  private lastMissRead = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly onMessage = (channel: string) => {
    if (channel === this.registry.keys.jobTypesChannel) void this.refresh().catch(() => undefined);
  };

  constructor(private readonly opts: JobTypeDirectoryOptions) {
    this.registry = new JobTypeRegistry(opts.connection, opts.prefix);
    this.validators = new SchemaValidators({ logger: opts.logger, max: 1024 });
  }

  /** Subscribes to changes and reads the registry; a Redis that is away is retried later. */
  async start(): Promise<void> {
    const { subscriber } = this.opts;
    if (subscriber) {
      subscriber.on('message', this.onMessage);
      const subscribed = subscriber
        .subscribe(this.registry.keys.jobTypesChannel)
        .catch(() => undefined);
      // With Redis away the subscription is made when it returns (the read below is retried).
      if (subscriber.status === 'ready') await subscribed;
    }
    const every = this.opts.refreshMs ?? 5000;
    if (every > 0) {
      this.timer = setInterval(() => void this.refresh().catch(() => undefined), every);
      this.timer.unref();
    }
    const read = () =>
      this.refresh().catch((err: unknown) =>
        this.opts.logger?.warn({ err }, 'job-type registry not read yet; retrying'),
      );
    // Not before the connection is ready: a producer fails commands sent while it connects.
    if (this.opts.connection.status === 'ready') await read();
    else this.opts.connection.once('ready', () => void read());
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    const { subscriber } = this.opts;
    if (!subscriber) return;
    subscriber.off('message', this.onMessage);
    // A subscriber waits for Redis however long it is away: only a live one is waited for.
    const unsubscribed = subscriber
      .unsubscribe(this.registry.keys.jobTypesChannel)
      .catch(() => undefined);
    if (subscriber.status === 'ready') await unsubscribed;
  }

  /** The type as last read, or undefined (see `resolve` to re-read on a miss). */
  get(name: string): RegisteredJobType | undefined {
    return this.types.get(name);
  }

  /** Every type as last read, by name. */
  values(): IterableIterator<RegisteredJobType> {
    return this.types.values();
  }

  get names(): string[] {
    return [...this.types.keys()];
  }

  /**
   * The type, re-reading the registry first if it is not known here (a worker may have just
   * registered it). Throws what the read throws when Redis is away.
   */
  async resolve(name: string): Promise<RegisteredJobType | undefined> {
    const known = this.types.get(name);
    if (known) return known;
    const now = Date.now();
    if (now - this.lastMissRead >= (this.opts.missRefreshMs ?? 250) || this.loading) {
      this.lastMissRead = now;
      await this.refresh();
    }
    return this.types.get(name);
  }

  /** Re-reads the registry now (concurrent callers share one read). */
  refresh(): Promise<void> {
    this.loading ??= this.registry
      .read()
      .then(async (types) => {
        await this.readCaps(types);
        this.types = types;
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  /** Reads the registry afresh (for discovery: live counts as of now) and keeps what it read. */
  async list(): Promise<RegisteredJobType[]> {
    await this.refresh();
    return [...this.types.values()];
  }

  /** `[]` when `input` matches the type's validating schema, otherwise one entry per problem. */
  validate(type: RegisteredJobType, input: unknown): FieldError[] {
    const validate = this.compiled(type);
    if (validate(input)) return [];
    return (validate.errors ?? []).map(toFieldError);
  }

  /**
   * The fleet-wide concurrency caps workers stored on the types' own queues (BullMQ global
   * concurrency, in the queue's `meta` hash on the configured prefix): a capped type's tasks go
   * to shard 0 only, so the cap holds exactly (decision 37).
   */
  private async readCaps(types: Map<string, RegisteredJobType>): Promise<void> {
    const own = [...types.values()].filter((t) => t.queue);
    if (own.length === 0) return;
    const pipeline = this.opts.connection.pipeline();
    for (const type of own) {
      pipeline.hget(`${this.opts.prefix}:${queueNameFor(type)}:meta`, 'concurrency');
    }
    const replies = (await pipeline.exec()) ?? [];
    for (const [i, type] of own.entries()) {
      const cap = Number(replies[i]?.[1] ?? 0);
      if (Number.isInteger(cap) && cap > 0) type.fleetConcurrency = cap;
    }
  }

  private compiled(type: RegisteredJobType): ValidateFunction {
    const key = `${type.name}@${type.version}`;
    if (!this.uncompiled.has(key)) {
      try {
        return this.validators.get(key, type.inputSchema, {
          type: type.name,
          version: type.version,
        });
      } catch (err) {
        // A schema ajv cannot compile (a worker's zod emitted something exotic): accept the
        // input here and let the worker's own zod schema, which is the authority, judge it.
        this.opts.logger?.warn({ err, type: key }, 'input schema does not compile; not checked');
        if (this.uncompiled.size >= 1024) this.uncompiled.clear();
        this.uncompiled.add(key);
      }
    }
    return ACCEPT_ALL;
  }
}

/** The validator of a schema that did not compile: the worker judges the input. */
const ACCEPT_ALL = Object.assign(() => true, { errors: null }) as unknown as ValidateFunction;

function toFieldError(e: ErrorObject): FieldError {
  const extra =
    e.keyword === 'additionalProperties'
      ? `/${String((e.params as { additionalProperty?: string }).additionalProperty)}`
      : e.keyword === 'required'
        ? `/${String((e.params as { missingProperty?: string }).missingProperty)}`
        : '';
  const path = `input${`${e.instancePath}${extra}`.replaceAll('/', '.')}`;
  return { path, message: ajvMessage(e) };
}
