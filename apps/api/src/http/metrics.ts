import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from 'express';
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { QUEUE_STATES, type TaskEngine } from '@longrun/engine';

/** The API's Prometheus metrics, on a registry of its own. */
export class ApiMetrics {
  readonly registry = new Registry();
  private readonly duration: Histogram<'method' | 'route' | 'status'>;
  /** Labelled children, by label values: prom-client hashes the label object on every call. */
  private readonly children = new Map<string, { observe(seconds: number): void }>();
  /** Mount paths by their lower-case spelling. */
  private readonly mounts: ReadonlyMap<string, string>;

  constructor(
    /**
     * What is counted at each scrape: every queue on every shard tasks may be on (the
     * configured ones and any a lowered count left behind), each shard on its own (`shard`),
     * and the tenants' stored bytes. The engine bounds each read by its call deadline.
     */
    engine: Pick<TaskEngine, 'queueDepth' | 'storedBytes'>,
    /** With a storage budget: each tenant's stored bytes, read at scrape time. */
    budget?: { tenants: readonly string[]; maxBytes: () => number },
    /**
     * The paths routers are mounted at (`app.use(path, router)`). Express matches
     * them in any letter case and gives the request's spelling as `baseUrl`; the label uses the
     * mount's own, and a request under no mount named here is `unmatched` (see `routeLabel`).
     */
    mounts: readonly string[] = [],
  ) {
    this.mounts = new Map(mounts.map((m) => [m.toLowerCase(), m]));
    collectDefaultMetrics({ register: this.registry });
    this.duration = new Histogram({
      name: 'longrun_http_request_duration_seconds',
      help: 'HTTP request duration by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
    const up = new Gauge({
      name: 'longrun_redis_up',
      help: '1 when Redis answered the last scrape, 0 otherwise',
      registers: [this.registry],
    });
    new Gauge({
      name: 'longrun_queue_jobs',
      help: 'BullMQ jobs per state and shard, read at scrape time (O(1) per state); sum without (shard) for the whole',
      labelNames: ['queue', 'state', 'shard'],
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          for (const { queue, shard, counts } of await engine.queueDepth()) {
            for (const state of QUEUE_STATES) {
              this.set({ queue, state, shard: String(shard) }, counts[state]);
            }
          }
          up.set(1);
        } catch {
          up.set(0);
        }
      },
    });
    if (budget && budget.maxBytes() > 0) {
      new Gauge({
        name: 'longrun_tenant_storage_budget_bytes',
        help: "Bytes one tenant's stored tasks may take (LONGRUN_TENANT_MAX_BYTES; by default a quarter of Redis's maxmemory)",
        registers: [this.registry],
        collect() {
          // The default follows Redis's maxmemory, so it is read at scrape time.
          this.set(budget.maxBytes());
        },
      });
      new Gauge({
        name: 'longrun_tenant_stored_bytes',
        help: "Bytes each tenant's stored tasks take (records, inputs, results, answers), read at scrape time; tenant_hash is the first 12 hex digits of the tenant's SHA-256 (/metrics needs no key, so no tenant names)",
        labelNames: ['tenant_hash'],
        registers: [this.registry],
        async collect() {
          this.reset();
          // Redis away: no samples (longrun_redis_up says why), rather than a failed scrape.
          const used = await engine
            .storedBytes(budget.tenants)
            .catch(() => new Map<string, number>());
          for (const [tenant, bytes] of used) this.set({ tenant_hash: tenantHash(tenant) }, bytes);
        },
      });
    }
  }

  /**
   * Records one answered request, labelled with the route pattern (not the raw path). Called by
   * `trackRequest`'s one `finish` listener, which times the request.
   */
  observe(req: IncomingMessage, res: ServerResponse, seconds: number, given?: string): void {
    let route = given ?? this.routeLabel(req as Partial<Request>);
    // Long polls are held open on purpose; a label of their own keeps them out of latency SLOs.
    if (route.endsWith('/result') && (req as Partial<Request>).query?.wait !== undefined) {
      route += '?wait';
    }
    const status = String(res.statusCode);
    const key = `${req.method} ${route} ${status}`;
    let child = this.children.get(key);
    if (!child) {
      // Bounded: methods × route patterns × statuses (unmatched paths share one label).
      child = this.duration.labels({ method: req.method, route, status });
      this.children.set(key, child);
    }
    child.observe(seconds);
  }

  /**
   * The route pattern a request matched, from a fixed set: the pattern as the code wrote it,
   * under its router's mount path as the code wrote it (`/a2A/JsonRpc` is `/a2a/jsonrpc/`, as
   * Express routes it), never a spelling of the request's; a request no route took, or taken
   * under a mount not named in `mounts`, is `unmatched`.
   */
  private routeLabel(req: Partial<Request>): string {
    const { route: matched, baseUrl = '' } = req;
    if (!matched) return 'unmatched';
    const mount = baseUrl === '' ? '' : this.mounts.get(baseUrl.toLowerCase());
    return mount === undefined ? 'unmatched' : `${mount}${String(matched.path)}`;
  }
}

/** A tenant as `/metrics` names it: `printf %s <tenant> | sha256sum | cut -c1-12`. */
export function tenantHash(tenant: string): string {
  return createHash('sha256').update(tenant).digest('hex').slice(0, 12);
}
