import { createHash } from 'node:crypto';
import {
  createJobRequestSchema,
  fieldErrors,
  LIFECYCLE,
  type A2APushTarget,
  type CreateJobRequest,
  type TaskRecord,
} from '@longrun/core';
import type { RegisteredJobType } from '../registry/job-type-registry.js';
import type { JobTypeDirectory } from '../registry/job-type-directory.js';
import { newTaskId } from '../shards.js';
import { stableJson } from '../stable-json.js';
import type { TaskKeys } from '../keys.js';
import type { WebhookTargetPolicy } from '../webhook-target.js';
import { invalid, type SubmitOutcome } from './outcomes.js';
import { pushTarget } from './push-config.js';
import { unknownJobType } from './unknown-type.js';

/** What reading a submit's request needs: the types, the callback policy, the ttl bounds. */
export interface RequestDeps {
  /** The shard this submitter places tasks on (its index goes into each task id). */
  shard?: number | undefined;
  /** The registered job types: their input schemas, queues and attempts. */
  types: JobTypeDirectory;
  webhookPolicy: WebhookTargetPolicy;
  defaultTtlMs: number;
  maxTtlMs: number;
  /** The store's keys (the idempotency claim's). */
  keys: Pick<TaskKeys, 'idempotency'>;
}

/** An idempotency key's claim: the key in Redis and the value it holds (task id, body hash). */
export type Idempotency = { key: string; value: string };

/**
 * A submit's request, read: its shape, callback or push config, input against the job type,
 * timing, and the record and idempotency claim made of it. Nothing here touches Redis.
 */
export class SubmitRequest {
  private readonly schema: ReturnType<typeof createJobRequestSchema>;

  constructor(private readonly deps: RequestDeps) {
    this.schema = createJobRequestSchema(deps.maxTtlMs);
  }

  /** The request's shape and its callback. */
  parse(body: unknown): CreateJobRequest | SubmitOutcome {
    const parsed = this.schema.safeParse(body);
    if (!parsed.success)
      return invalid(400, 'The request body is invalid', fieldErrors(parsed.error));
    const request = parsed.data;
    const refused = request.callback
      ? this.deps.webhookPolicy.refuseUrl(request.callback.url)
      : null;
    if (refused) {
      return invalid(400, 'The callback URL is not allowed', [
        { path: 'callback.url', message: `${refused} (see LONGRUN_WEBHOOK_ALLOW)` },
      ]);
    }
    return request;
  }

  /** The push notification config a submit was given, if any: one target per task. */
  parsePush(request: CreateJobRequest, config: unknown): A2APushTarget | SubmitOutcome | undefined {
    if (config === undefined) return undefined;
    if (request.callback) {
      return invalid(400, 'The request body is invalid', [
        {
          path: 'callback',
          message: 'a task takes a callback or a push notification config, not both',
        },
      ]);
    }
    // The id is the task's unless given; the task has no id yet.
    return pushTarget(config, '', this.deps.webhookPolicy, 'pushNotificationConfig');
  }

  /** The type must be registered and the input must match its (validating version's) schema. */
  checkInput(
    request: CreateJobRequest,
    definition: RegisteredJobType | undefined,
  ): RegisteredJobType | SubmitOutcome {
    if (!definition) {
      return unknownJobType(request.type, this.deps.types.names);
    }
    const errors = this.deps.types.validate(definition, request.input);
    if (errors.length > 0) {
      return invalid(422, `The input does not match job type "${request.type}"`, errors);
    }
    return definition;
  }

  /** A delayed start within the ttl, given one way; a timeout within the type's. */
  checkTiming(request: CreateJobRequest, definition: RegisteredJobType): SubmitOutcome | null {
    const problems: { path: string; message: string }[] = [];
    if (request.delayMs !== undefined && request.runAt !== undefined) {
      problems.push({ path: 'runAt', message: 'give delayMs or runAt, not both' });
    }
    const ttlMs = request.ttlMs ?? this.deps.defaultTtlMs;
    const startIn =
      request.runAt !== undefined ? Date.parse(request.runAt) - Date.now() : (request.delayMs ?? 0);
    if (startIn >= ttlMs) {
      problems.push({
        path: request.runAt !== undefined ? 'runAt' : 'delayMs',
        message: `the task would start after it expires (its ttl is ${ttlMs} ms)`,
      });
    }
    if (request.timeoutMs !== undefined && definition.timeoutMs !== undefined) {
      if (request.timeoutMs > definition.timeoutMs) {
        problems.push({
          path: 'timeoutMs',
          message: `must not exceed job type "${definition.name}"'s own timeout of ${definition.timeoutMs} ms`,
        });
      }
    }
    return problems.length > 0 ? invalid(400, 'The request body is invalid', problems) : null;
  }

  newRecord(tenant: string, request: CreateJobRequest, definition: RegisteredJobType): TaskRecord {
    const now = Date.now();
    const runAt =
      request.runAt !== undefined
        ? Date.parse(request.runAt)
        : request.delayMs
          ? now + request.delayMs
          : undefined;
    const later = runAt !== undefined && runAt > now;
    return {
      id: newTaskId(this.deps.shard ?? 0),
      tenant,
      type: request.type,
      status: LIFECYCLE.submit.to,
      // Accepted all the same: the work queues up until a worker of the type starts.
      statusMessage: later ? SCHEDULED : queuedMessage(definition),
      createdAt: now,
      updatedAt: now,
      ttlMs: request.ttlMs ?? this.deps.defaultTtlMs,
      input: request.input,
      cancelRequested: false,
      awaitingInput: false,
      inputs: [],
      ...(request.callback ? { callback: request.callback } : {}),
      ...(request.priority ? { priority: request.priority } : {}),
      ...(later ? { runAt } : {}),
      ...(request.timeoutMs ? { timeoutMs: request.timeoutMs } : {}),
      ...(request.tags?.length ? { tags: request.tags } : {}),
    };
  }

  /** The idempotency key's claim: the task it names and the fingerprint of the body. */
  claim(
    tenant: string,
    id: string,
    key: string,
    request: CreateJobRequest,
    push?: A2APushTarget,
  ): Idempotency {
    const { type, input, ttlMs, callback, priority, delayMs, runAt, timeoutMs, tags } = request;
    const bodyHash = sha256(
      stableJson({
        type,
        input,
        ttlMs: ttlMs ?? null,
        callback: callback ?? null,
        priority: priority ?? null,
        // Only when given, so the fingerprint of a body without them is what it always was.
        ...(delayMs !== undefined ? { delayMs } : {}),
        ...(runAt !== undefined ? { runAt } : {}),
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        ...(tags !== undefined ? { tags } : {}),
        // As given (its id empty unless named), so a retried start matches its first.
        ...(push ? { push } : {}),
      }),
    );
    return {
      key: this.deps.keys.idempotency(tenant, sha256(key)),
      value: `${id} ${bodyHash}`,
    };
  }
}

/**
 * A new task's `statusMessage`: queued, and what it waits for besides its turn when that is known
 * now (no worker serves its type). A type's rate limit is not mentioned: whether it holds this
 * task back is decided when a worker takes it, so at submit time "rate-limited" would not be true
 * (the limit is listed with the type, `GET /v1/job-types`).
 */
function queuedMessage(definition: RegisteredJobType): string {
  const queued = LIFECYCLE.submit.statusMessage;
  if (definition.workers === 0) {
    return `${queued}: waiting for a worker that serves "${definition.name}" (none is running)`;
  }
  return queued;
}

/** A delayed task's `statusMessage` until it starts. */
export const SCHEDULED = 'scheduled';

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
