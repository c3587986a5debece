import { describe, expect, it } from 'vitest';
import { ConfigError } from '@longrun/core';
import { loadWorkerEnv as loadConfig } from './env.js';

describe('worker config', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      LONGRUN_WORKER_CONCURRENCY: 8,
      LONGRUN_METRICS_PORT: 9464,
      LONGRUN_MAX_STALLED_COUNT: 3,
      LONGRUN_SHUTDOWN_GRACE_MS: 30_000,
    });
    expect(loadConfig({}).LONGRUN_LOCK_DURATION_MS).toBeUndefined(); // BullMQ's own default
  });

  it.each([
    [{ LONGRUN_WORKER_CONCURRENCY: '0' }, 'LONGRUN_WORKER_CONCURRENCY'],
    [{ LONGRUN_WORKER_CONCURRENCY: 'many' }, 'LONGRUN_WORKER_CONCURRENCY'],
    [{ LONGRUN_METRICS_PORT: '70000' }, 'LONGRUN_METRICS_PORT'],
    [{ LONGRUN_LOCK_DURATION_MS: '10' }, 'LONGRUN_LOCK_DURATION_MS'],
    [{ LONGRUN_SHARDS: '0' }, 'LONGRUN_SHARDS'],
    [{ LONGRUN_SHARDS: '1025' }, 'LONGRUN_SHARDS'],
    [{ LONGRUN_WORKER_SHARDS: '2-1' }, 'LONGRUN_WORKER_SHARDS'],
    [{ LONGRUN_WORKER_SHARDS: 'some' }, 'LONGRUN_WORKER_SHARDS'],
  ])('rejects %o naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(name));
  });

  it('serves every announced shard unless told which', () => {
    expect(loadConfig({}).LONGRUN_SHARDS).toBe(1);
    expect(loadConfig({}).LONGRUN_WORKER_SHARDS).toBeUndefined();
    expect(loadConfig({ LONGRUN_WORKER_SHARDS: 'all' }).LONGRUN_WORKER_SHARDS).toBeUndefined();
    expect(loadConfig({ LONGRUN_WORKER_SHARDS: '0-2,7' }).LONGRUN_WORKER_SHARDS).toEqual([
      0, 1, 2, 7,
    ]);
  });
});
