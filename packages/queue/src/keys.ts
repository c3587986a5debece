/** BullMQ queue that carries every job type (BullMQ keys: `<prefix>:tasks:*`). */
export const QUEUE_NAME = 'tasks';

/** BullMQ queue of webhook deliveries. */
export const WEBHOOK_QUEUE_NAME = 'webhooks';

/** Largest createdAt the inverted index member can hold (year 2286). */
const MAX_MS = 9_999_999_999_999;

/** Key names for longrun's own records, next to BullMQ's under one prefix. */
export interface TaskKeys {
  task(id: string): string;
  index(tenant: string): string;
  idempotency(tenant: string, keyHash: string): string;
  /** Stream of a task's changes (SSE replays it). */
  events(id: string): string;
  /** Stream of status changes that owe a webhook delivery (the transactional outbox). */
  outbox: string;
  cancelChannel: string;
  /** Pub/sub channel announcing "task <id> has a new event" (a wake-up; the stream is the truth). */
  eventsChannel: string;
}

export function taskKeys(prefix: string): TaskKeys {
  return {
    task: (id) => `${prefix}:task:${id}`,
    index: (tenant) => `${prefix}:tenant:${tenant}:tasks`,
    idempotency: (tenant, keyHash) => `${prefix}:idem:${tenant}:${keyHash}`,
    events: (id) => `${prefix}:events:${id}`,
    outbox: `${prefix}:outbox`,
    cancelChannel: `${prefix}:cancel`,
    eventsChannel: `${prefix}:task-events`,
  };
}

/** Member of a tenant's index: sorts newest first lexically, ties broken by id. */
export function indexMember(createdAt: number, id: string): string {
  return `${invertedTime(createdAt)}:${id}`;
}

/** `ZREMRANGEBYLEX` lower bound covering every member created before `createdBefore`. */
export function indexPruneBound(createdBefore: number): string {
  return `[${invertedTime(createdBefore - 1)}`;
}

function invertedTime(ms: number): string {
  return String(MAX_MS - ms).padStart(13, '0');
}
