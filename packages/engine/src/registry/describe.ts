import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { JobTypeDefinition } from '@longrun/core';
import { queueNameFor } from '../keys.js';
import { stableJson } from '../stable-json.js';

/** What a worker publishes about one job type it serves: enough to validate and enqueue it. */
export interface JobTypeDescriptor {
  name: string;
  /** A content hash of everything below: two workers with equal versions agree on the type. */
  version: string;
  /** The queue the type names (`tasks-<queue>`), if it names one. */
  queue?: string | undefined;
  /**
   * The BullMQ queue this version's workers consume for it, and where the API puts its jobs:
   * its named queue, or one of its own (`tasks.<name>`). Versions registered before workers
   * announced it have none: they ran on the shared `tasks` queue (see `legacyQueueNameFor`).
   */
  queueName?: string | undefined;
  attempts: number;
  backoffMs: number;
  /** How long one run may take by default, and at most (ms); unset: no timeout. */
  timeoutMs?: number | undefined;
  /** At most `max` runs start per `durationMs` across the fleet; unset: no limit. */
  rateLimit?: { max: number; durationMs: number } | undefined;
  /** The input's JSON Schema (draft 2020-12), generated from the type's zod schema. */
  inputSchema: Record<string, unknown>;
  /** The input field a text-only A2A message fills (`JobTypeDefinition.textInput`), if any. */
  textInput?: string | undefined;
}

/** Default backoff base between attempts, as `TaskQueue` applies it. */
export const DEFAULT_BACKOFF_MS = 1000;

/**
 * Describes a job type for the registry: its input as JSON Schema (as the client writes it, so
 * defaults make fields optional) and a version hash of what the API acts on.
 * @example describeJobType(sleepJob).version // '3f0c…' (16 hex digits)
 */
export function describeJobType(definition: JobTypeDefinition): JobTypeDescriptor {
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(definition.input, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  const body = {
    name: definition.name,
    ...(definition.queue ? { queue: definition.queue } : {}),
    queueName: queueNameFor(definition),
    attempts: definition.attempts ?? 1,
    backoffMs: definition.backoffMs ?? DEFAULT_BACKOFF_MS,
    ...(definition.timeoutMs ? { timeoutMs: definition.timeoutMs } : {}),
    ...(definition.rateLimit
      ? {
          rateLimit: { max: definition.rateLimit.max, durationMs: definition.rateLimit.durationMs },
        }
      : {}),
    inputSchema,
    ...(definition.textInput ? { textInput: definition.textInput } : {}),
  };
  return versioned(body);
}

/** What an HTTP worker registers for a job type (`PUT /v1/worker/job-types/{name}`). */
export interface JsonJobTypeSpec {
  name: string;
  /** The input's JSON Schema (draft 2020-12), as the worker wrote it. */
  inputSchema: Record<string, unknown>;
  queue?: string | undefined;
  attempts?: number | undefined;
  backoffMs?: number | undefined;
  timeoutMs?: number | undefined;
  rateLimit?: { max: number; durationMs: number } | undefined;
}

/**
 * Describes a job type an HTTP worker registers with its input as JSON Schema: the same
 * descriptor, queue and version hash an SDK worker's type of the same settings gets.
 * @example describeJsonJobType({ name: 'py-wordcount', inputSchema: { type: 'object' } }).queueName // 'tasks.py-wordcount'
 */
export function describeJsonJobType(spec: JsonJobTypeSpec): JobTypeDescriptor {
  const { $schema: _dialect, ...inputSchema } = spec.inputSchema;
  return versioned({
    name: spec.name,
    ...(spec.queue ? { queue: spec.queue } : {}),
    queueName: queueNameFor(spec),
    attempts: spec.attempts ?? 1,
    backoffMs: spec.backoffMs ?? DEFAULT_BACKOFF_MS,
    ...(spec.timeoutMs ? { timeoutMs: spec.timeoutMs } : {}),
    ...(spec.rateLimit
      ? { rateLimit: { max: spec.rateLimit.max, durationMs: spec.rateLimit.durationMs } }
      : {}),
    inputSchema,
  });
}

/** The descriptor with its version: a hash of everything the API acts on. */
function versioned(body: Omit<JobTypeDescriptor, 'version'>): JobTypeDescriptor {
  const version = createHash('sha256').update(stableJson(body)).digest('hex').slice(0, 16);
  return { ...body, version };
}
