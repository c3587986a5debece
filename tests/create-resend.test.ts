// A create Redis ran whose reply was lost with the connection is sent again by ioredis once it
// reconnects (`autoResendUnfulfilledCommands`, on by default, and the API's producers allow one
// retry). The second run must not touch the task: by then a worker may have run it, and a create
// writing the record again would take a completed task back to `working` (and the reconciler
// would run it again), count its bytes twice or queue a second job. The connection is cut for
// real: the API's store talks to Redis through a TCP relay that drops the create's reply and
// holds the reconnection until the task has moved on.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createRedis, TaskQueue, TaskStore } from '@longrun/engine/internal';
import { cutRelay } from './helpers/cut-relay.js';
import { waitFor } from './helpers/http.js';
import { newRecord } from './helpers/records.js';
import { uniquePrefix } from './helpers/service.js';

const redisUrl = inject('redisUrl');
const direct = new Redis(redisUrl);
afterAll(() => direct.quit());

describe('a create sent again after a reconnect', () => {
  it('leaves a task that moved on as it is: no second job, no second count, status kept', async () => {
    const relay = await cutRelay(redisUrl);
    const conn = createRedis(relay.url, 'producer');
    const prefix = uniquePrefix();
    try {
      const store = new TaskStore(conn, prefix, 86_400_000);
      const jobs = new TaskQueue({ connection: direct, prefix, types: new Map() });
      const queue = jobs.queueFor('echo');
      await queue.waitUntilReady();
      if (conn.status !== 'ready') await new Promise((r) => conn.once('ready', r));
      const record = newRecord({ input: { n: 1 } });
      const item = {
        record,
        job: jobs.prepare(record, { name: 'echo' }),
        maxBytes: 1_000_000,
      };
      relay.cutNextReply();
      const created = store.createMany([item]);
      // Redis ran the create; its reply was dropped and the client waits to reconnect.
      await waitFor(async () => (await direct.exists(store.keys.task(record.id))) === 1, {
        what: 'the create to run',
      });
      const bytes = Number(await direct.hget(store.keys.usage('t'), '#total'));
      // Meanwhile a worker takes the job and completes the task.
      const moved = await direct.lrange(queue.toKey('wait'), 0, -1);
      expect(moved).toEqual([record.id]);
      await direct.lrem(queue.toKey('wait'), 0, record.id);
      const directStore = new TaskStore(direct, prefix, 86_400_000);
      expect(
        await directStore.transition(record.id, 'complete', { result: { n: 1 } }),
      ).toMatchObject({ ok: true });
      relay.release();
      expect(await created).toEqual([{ created: true }]);
      const after = await directStore.get(record.id);
      expect(after?.status).toBe('completed');
      expect(after?.result).toEqual({ n: 1 });
      expect(await direct.lrange(queue.toKey('wait'), 0, -1)).toEqual([]);
      expect(await direct.zcard(queue.toKey('prioritized'))).toBe(0);
      expect(Number(await direct.hget(store.keys.usage('t'), '#total'))).toBe(
        bytes + JSON.stringify({ n: 1 }).length,
      );
    } finally {
      conn.disconnect();
      await relay.close();
    }
  });
});
