import type { Redis } from 'ioredis';
import { FIELD } from '@longrun/core';
import type { TaskEvents } from './task-events.js';
import type { TaskKeys } from './keys.js';

/** What `push` did: `notFound` also covers another tenant's task (never told apart). */
export type PushOutcome = 'queued' | 'notFound' | 'full';

/** Most messages one task's side channel holds unless the caller says otherwise. */
export const DEFAULT_MAX_TASK_MESSAGES = 100;

// Each script first checks that the task exists and is the tenant's: a door cannot reach the
// side channel of a task its caller does not own. KEYS: task record, message list. The list
// expires with the record (same remaining time), so nothing outlives the task.
const OWNED = `
local owner = redis.call('HGET', KEYS[1], '${FIELD.tenant}')
if owner ~= ARGV[1] then return false end
`;

const PUSH = `${OWNED}
local max = tonumber(ARGV[3])
if max > 0 and redis.call('LLEN', KEYS[2]) >= max then return 'full' end
redis.call('RPUSH', KEYS[2], ARGV[2])
local left = redis.call('PTTL', KEYS[1])
if left > 0 then redis.call('PEXPIRE', KEYS[2], left) end
redis.call('PUBLISH', ARGV[4], '0')
return 'queued'`;

const SHIFT = `${OWNED}
return { redis.call('LPOP', KEYS[2]) }`;

const DRAIN = `${OWNED}
local all = redis.call('LRANGE', KEYS[2], 0, -1)
redis.call('DEL', KEYS[2])
return all`;

/**
 * A task's side channel for the protocol doors: a FIFO of JSON messages per task
 * (`<prefix>:messages:<id>`, a Redis list expiring with the task) that any API replica can append
 * to and take from, for one tenant at a time. A push wakes whoever waits on the task (it is
 * announced on the task's own event channel, so `subscribe` hears task changes and pushes alike).
 * The MCP door keeps its SDK task message queue here: an answer to an `elicitation/create`
 * posted to one replica reaches the `tasks/result` call waiting on another.
 */
export class TaskMessages {
  constructor(
    private readonly connection: Redis,
    private readonly keys: TaskKeys,
    private readonly events: TaskEvents,
    private readonly redis: <T>(operation: () => Promise<T>) => Promise<T>,
  ) {}

  /**
   * Appends `message` to the task's channel unless it already holds `max` (0: no bound).
   * @example await messages.push('acme', taskId, JSON.stringify({ type: 'response', message }))
   */
  async push(
    tenant: string,
    id: string,
    message: string,
    max = DEFAULT_MAX_TASK_MESSAGES,
  ): Promise<PushOutcome> {
    const reply = await this.redis(() =>
      this.connection.eval(
        PUSH,
        2,
        this.keys.task(id),
        this.keys.messages(id),
        tenant,
        message,
        String(max),
        this.keys.eventsChannel + id,
      ),
    );
    return reply === 'queued' || reply === 'full' ? reply : 'notFound';
  }

  /** Takes the oldest message, or `null` (none, or not the tenant's task). */
  async shift(tenant: string, id: string): Promise<string | null> {
    const reply = (await this.redis(() =>
      this.connection.eval(SHIFT, 2, this.keys.task(id), this.keys.messages(id), tenant),
    )) as [string | null] | null;
    return reply?.[0] ?? null;
  }

  /** Takes every message, oldest first (`[]` for none, or not the tenant's task). */
  async drain(tenant: string, id: string): Promise<string[]> {
    const reply = (await this.redis(() =>
      this.connection.eval(DRAIN, 2, this.keys.task(id), this.keys.messages(id), tenant),
    )) as string[] | null;
    return reply ?? [];
  }

  /**
   * Calls `listener` whenever the task changes or a message is pushed to it (and once the
   * subscription is live); returns the function that stops it. Wake-ups only: read after each.
   */
  subscribe(id: string, listener: () => void): () => void {
    return this.events.on(id, listener);
  }
}
