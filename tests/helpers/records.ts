import { randomUUID } from 'node:crypto';
import type { TaskRecord } from '@longrun/core';

/** A new `working` task record of tenant "t" (type echo, ttl 60 s), with `overrides` on top. */
export function newRecord(overrides: Partial<TaskRecord> = {}): TaskRecord {
  const now = Date.now();
  return {
    id: randomUUID(),
    tenant: 't',
    type: 'echo',
    status: 'working',
    statusMessage: 'queued',
    createdAt: now,
    updatedAt: now,
    ttlMs: 60_000,
    input: {},
    cancelRequested: false,
    awaitingInput: false,
    inputs: [],
    ...overrides,
  };
}
