/** BullMQ queue that carries every job type (BullMQ keys: `<prefix>:tasks:*`). */
export const QUEUE_NAME = 'tasks';

/** Largest createdAt the inverted index member can hold (year 2286). */
const MAX_MS = 9_999_999_999_999;

/** Key names for longrun's own records, next to BullMQ's under one prefix. */
export interface TaskKeys {
  task(id: string): string;
  index(tenant: string): string;
  idempotency(tenant: string, keyHash: string): string;
  cancelChannel: string;
}

export function taskKeys(prefix: string): TaskKeys {
  return {
    task: (id) => `${prefix}:task:${id}`,
    index: (tenant) => `${prefix}:tenant:${tenant}:tasks`,
    idempotency: (tenant, keyHash) => `${prefix}:idem:${tenant}:${keyHash}`,
    cancelChannel: `${prefix}:cancel`,
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
