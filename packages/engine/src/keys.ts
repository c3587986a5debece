/**
 * The shared BullMQ queue every job type ran on before each had its own (BullMQ keys:
 * `<prefix>:tasks:*`). Workers keep draining it, so jobs an older API or worker version left there
 * still run (docs/decisions.md, "A queue per job type"); nothing new goes to it unless an older worker version is the one the
 * registry routes to.
 */
export const QUEUE_NAME = 'tasks';

/**
 * The BullMQ queue a job type runs on: the queue its worker announced (`queueName`), else a queue
 * named by the type (`queue`), else one of its own per type. Only workers that serve
 * a type consume its queue, so no worker picks up a job it has no handler for.
 * @example queueNameFor({ name: 'resize', queue: 'images' }) // 'tasks-images'
 * @example queueNameFor({ name: 'echo' }) // 'tasks.echo'
 */
export function queueNameFor(definition: {
  name: string;
  queue?: string | undefined;
  queueName?: string | undefined;
}): string {
  if (definition.queueName) return definition.queueName;
  return definition.queue
    ? `${QUEUE_NAME}-${definition.queue}`
    : `${QUEUE_NAME}.${definition.name}`;
}

/**
 * Where a version of a job type that announced no queue name ran (before each type had its own): a named
 * queue, or the shared `tasks` queue.
 */
export function legacyQueueNameFor(definition: { queue?: string | undefined }): string {
  return definition.queue ? `${QUEUE_NAME}-${definition.queue}` : QUEUE_NAME;
}

/** BullMQ queue of webhook deliveries. */
export const WEBHOOK_QUEUE_NAME = 'webhooks';

/**
 * BullMQ queue of schedule ticks: one job scheduler per schedule (BullMQ keys:
 * `<prefix>:schedules:*`), whose jobs the API processes' tickers turn into tasks.
 */
export const SCHEDULE_QUEUE_NAME = 'schedules';

/** Between a tenant's index key and a tag's hex in its tag index key. */
export const TAG_INFIX = ':tag:';

/** Largest createdAt the inverted index member can hold (year 2286). */
const MAX_MS = 9_999_999_999_999;

/** Key names for longrun's own records, next to BullMQ's under one prefix. */
export interface TaskKeys {
  task(id: string): string;
  index(tenant: string): string;
  /**
   * The tenant's tasks carrying `tag`, as `index` holds them (same members): `<index>:tag:<hex of
   * the tag's UTF-8>`, so that no tag spells another key (`lua/includes/tags.lua` builds it too).
   */
  tagIndex(tenant: string, tag: string): string;
  /** The tenant's non-terminal tasks, scored by expiry (for the open-tasks cap). */
  openTasks(tenant: string): string;
  /**
   * The bytes a tenant's tasks keep, for its storage budget: a hash of expiry bucket (`@<n>`, or
   * a task id an older version counted alone) -> bytes with the total under `#total`, and beside
   * it (`<usage>-exp`) a sorted set of the same entries by expiry time (`lua/includes/usage.lua`).
   */
  usage(tenant: string): string;
  /** `openTasks(tenant)` is this + tenant + ':open' (Lua builds it from the record's tenant). */
  tenantPrefix: string;
  /**
   * The tenants that may have open tasks (a sorted set of names, every score 0, that the create
   * fills): the reconciler walks their open sets in name order, a page of names at a time, and
   * drops a tenant whose open set is gone.
   */
  openTenants: string;
  /** The same as a plain set, as the version before filled it: the reconciler drains it. */
  legacyOpenTenants: string;
  /**
   * Every open task of every tenant (a sorted set of ids), which creates filled before
   * `openTenants` took its place: the reconciler drains what an older version left in it.
   */
  legacyAllOpen: string;
  /** A queue's fair-share tags: a hash of tenant -> virtual start of its last task (decision 33). */
  fairShare(queue: string): string;
  /** The reconciler's lock and its place in the walk (a tenant, and an entry of its open set). */
  reconcilerLock: string;
  reconcilerCursor: string;
  idempotency(tenant: string, keyHash: string): string;
  /** List of a task's changes, newest last (SSE replays it). */
  events(id: string): string;
  /** A task's side channel for the protocol doors (`TaskMessages`): a list of JSON messages. */
  messages(id: string): string;
  /** One side-channel call's answer, kept a while so that a call sent again runs once. */
  messageOp(id: string, op: string): string;
  /** Stream of status changes that owe a webhook delivery (the transactional outbox). */
  outbox: string;
  cancelChannel: string;
  /**
   * Prefix of the per-task pub/sub channels (`<eventsChannel><id>`) announcing "task <id> has a
   * new event" (a wake-up; the event list is the truth).
   */
  eventsChannel: string;
  /** The job-type registry: versions by `name@version`, who serves them, and when last seen. */
  jobTypes: string;
  jobTypeWorkers: string;
  jobTypeSeen: string;
  /** Who owns each job type (issue 41): `name` → `sdk`, or `http:<worker name>`. */
  jobTypeOwners: string;
  /** Announces "the registry changed" (a new version or worker, or one gone). */
  jobTypesChannel: string;
  /** The secret HTTP workers' lease ids are signed with (decision 79), shared by API replicas. */
  leaseSecret: string;
  /** A schedule: a hash of its tenant, creation time, what each run submits, and its last run. */
  schedule(id: string): string;
  /** The tenant's schedules: a sorted set of schedule id by creation time. */
  schedules(tenant: string): string;
  /** A schedule create's Idempotency-Key: `<scheduleId> <body hash>`, for a day. */
  scheduleIdempotency(tenant: string, keyHash: string): string;
}

/**
 * The keys under `prefix`. On a shard (decision 37) `prefix` is the shard's and `channelPrefix`
 * the configured one: pub/sub channels (not keys: no slot) are shared by every shard, so one
 * subscription per process hears them all.
 */
export function taskKeys(prefix: string, channelPrefix = prefix): TaskKeys {
  return {
    task: (id) => `${prefix}:task:${id}`,
    index: (tenant) => `${prefix}:tenant:${tenant}:tasks`,
    tagIndex: (tenant, tag) =>
      `${prefix}:tenant:${tenant}:tasks${TAG_INFIX}${Buffer.from(tag).toString('hex')}`,
    openTasks: (tenant) => `${prefix}:tenant:${tenant}:open`,
    usage: (tenant) => `${prefix}:tenant:${tenant}:usage`,
    tenantPrefix: `${prefix}:tenant:`,
    openTenants: `${prefix}:open-tenant-names`,
    legacyOpenTenants: `${prefix}:open-tenants`,
    legacyAllOpen: `${prefix}:open`,
    fairShare: (queue) => `${prefix}:fair:${queue}`,
    reconcilerLock: `${prefix}:reconciler:lock`,
    reconcilerCursor: `${prefix}:reconciler:cursor`,
    idempotency: (tenant, keyHash) => `${prefix}:idem:${tenant}:${keyHash}`,
    events: (id) => `${prefix}:events:${id}`,
    messages: (id) => `${prefix}:messages:${id}`,
    messageOp: (id, op) => `${prefix}:messages:${id}:op:${op}`,
    outbox: `${prefix}:outbox`,
    cancelChannel: `${channelPrefix}:cancel`,
    eventsChannel: `${channelPrefix}:task-events:`,
    jobTypes: `${prefix}:jobtypes`,
    jobTypeWorkers: `${prefix}:jobtypes:workers`,
    jobTypeSeen: `${prefix}:jobtypes:seen`,
    jobTypeOwners: `${prefix}:jobtypes:owners`,
    jobTypesChannel: `${channelPrefix}:jobtypes:changed`,
    leaseSecret: `${prefix}:lease-secret`,
    schedule: (id) => `${prefix}:schedule:${id}`,
    schedules: (tenant) => `${prefix}:tenant:${tenant}:schedules`,
    scheduleIdempotency: (tenant, keyHash) => `${prefix}:schedule-idem:${tenant}:${keyHash}`,
  };
}

/** Member of a tenant's index: sorts newest first lexically, ties broken by id. */
export function indexMember(createdAt: number, id: string): string {
  return `${invertedTime(createdAt)}:${id}`;
}

/** The creation time an index member holds (the inverse of `indexMember`'s). */
export function indexMemberTime(member: string): number {
  return MAX_MS - Number(member.slice(0, 13));
}

/** `ZREMRANGEBYLEX` lower bound covering every member created before `createdBefore`. */
export function indexPruneBound(createdBefore: number): string {
  return `[${invertedTime(createdBefore - 1)}`;
}

function invertedTime(ms: number): string {
  return String(MAX_MS - ms).padStart(13, '0');
}
