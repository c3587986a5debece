import { inject } from 'vitest';
import type { JobCatalog } from '@longrun/core';
import {
  createRedis,
  TaskQueue,
  TaskStore,
  TaskWorker,
  type TaskWorkerOptions,
} from '@longrun/engine/internal';
import { newRecord } from './records.js';
import { uniquePrefix } from './service.js';

/**
 * A `TaskWorker` in this process on a fresh prefix, with a producer's `TaskQueue` and `TaskStore`
 * beside it, all on real connections (the worker's may go through a relay: `workerUrl`). The
 * caller closes it (`close`), e.g. from its `afterAll`.
 * @example const w = await startInProcessWorker(catalog); const id = await w.submit('echo', {});
 */
export async function startInProcessWorker(
  catalog: JobCatalog,
  opts: {
    workerUrl?: string;
    concurrency?: number;
    onRun?: TaskWorkerOptions['onRun'];
    logger?: TaskWorkerOptions['logger'];
  } = {},
) {
  const prefix = uniquePrefix();
  const url = inject('redisUrl');
  const producer = createRedis(url, 'producer');
  const connection = createRedis(opts.workerUrl ?? url, 'worker');
  const subscriber = createRedis(url, 'subscriber');
  for (const conn of [producer, connection, subscriber]) {
    conn.on('error', () => undefined);
    if (conn.status !== 'ready') await new Promise((resolve) => conn.once('ready', resolve));
  }
  const tasks = new TaskQueue({ connection: producer, prefix, types: catalog });
  const store = new TaskStore(producer, prefix, 3_600_000);
  const worker = new TaskWorker({
    connection,
    subscriber,
    prefix,
    maxTtlMs: 3_600_000,
    catalog,
    concurrency: opts.concurrency ?? 2,
    logger: opts.logger ?? { info() {}, warn() {}, error() {} },
    ...(opts.onRun ? { onRun: opts.onRun } : {}),
  });
  await tasks.whenReady();
  await worker.start();
  return {
    prefix,
    tasks,
    store,
    worker,
    /** Stores a task of `type` and enqueues its job, as the API's submit does; its id. */
    async submit(type: string, input: Record<string, unknown> = {}): Promise<string> {
      const record = newRecord({ type, input, ttlMs: 600_000 });
      await store.create(record);
      await tasks.enqueue(record, catalog.get(type)!);
      return record.id;
    },
    async close() {
      await worker.close(true).catch(() => undefined);
      await tasks.close().catch(() => undefined);
      producer.disconnect();
      connection.disconnect();
      subscriber.disconnect();
    },
  };
}
