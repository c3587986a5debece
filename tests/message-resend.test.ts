// A task's side channel (`TaskMessages`: the MCP door's message queue, e.g. the answer to an
// elicitation) over a connection that is cut for real between Redis running a call and its reply
// reaching the client. ioredis sends the call again once it reconnects
// (`autoResendUnfulfilledCommands`; producers allow one retry), so Redis runs it twice: a push
// must not queue its message twice, and a shift or a drain must answer what it took the first
// time, not take more and lose what the first run took.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createRedis, TaskEvents, TaskMessages, TaskStore } from '@longrun/engine/internal';
import { cutRelay } from './helpers/cut-relay.js';
import { waitFor } from './helpers/http.js';
import { newRecord } from './helpers/records.js';
import { uniquePrefix } from './helpers/service.js';

const redisUrl = inject('redisUrl');
const direct = new Redis(redisUrl);
const subscriber = new Redis(redisUrl);
afterAll(async () => {
  await direct.quit();
  await subscriber.quit();
});

/** A task of tenant `t`, and its side channel reached through a relay that can cut a reply. */
async function setup() {
  const relay = await cutRelay(redisUrl);
  const conn = createRedis(relay.url, 'producer');
  conn.on('error', () => undefined);
  if (conn.status !== 'ready') await new Promise((r) => conn.once('ready', r));
  const store = new TaskStore(direct, uniquePrefix(), 86_400_000);
  const record = newRecord({ tenant: 't' });
  await store.create(record);
  const events = new TaskEvents(subscriber, store.keys.eventsChannel);
  const messages = new TaskMessages(conn, store.keys, events, (op) => op());
  const list = store.keys.messages(record.id);
  return {
    relay,
    messages,
    id: record.id,
    list,
    /** Cuts the reply to `call`, lets Redis run it, holds the reconnect until `meanwhile` ran. */
    async cut<T>(call: () => Promise<T>, ran: () => Promise<boolean>, meanwhile = async () => {}) {
      relay.cutNextReply();
      const pending = call();
      await waitFor(async () => (await ran()) || undefined, { what: 'Redis to run the call' });
      await meanwhile();
      relay.release();
      return pending;
    },
    async close() {
      conn.disconnect();
      await relay.close();
    },
  };
}

describe('a side-channel call sent again after a reconnect', () => {
  it('a push queues its message once', async () => {
    const s = await setup();
    try {
      const outcome = await s.cut(
        () => s.messages.push('t', s.id, '"m1"'),
        async () => (await direct.llen(s.list)) > 0,
      );
      expect(outcome).toBe('queued');
      expect(await direct.lrange(s.list, 0, -1)).toEqual(['"m1"']);
    } finally {
      await s.close();
    }
  });

  it('a shift answers the message it took, and the next one stays', async () => {
    const s = await setup();
    try {
      await direct.rpush(s.list, '"a"', '"b"');
      const taken = await s.cut(
        () => s.messages.shift('t', s.id),
        async () => (await direct.llen(s.list)) === 1,
      );
      expect(taken).toBe('"a"');
      expect(await direct.lrange(s.list, 0, -1)).toEqual(['"b"']);
    } finally {
      await s.close();
    }
  });

  it('a drain answers what it took; a message pushed meanwhile stays', async () => {
    const s = await setup();
    try {
      await direct.rpush(s.list, '"a"', '"b"');
      const taken = await s.cut(
        () => s.messages.drain('t', s.id),
        async () => (await direct.exists(s.list)) === 0,
        async () => void (await direct.rpush(s.list, '"c"')),
      );
      expect(taken).toEqual(['"a"', '"b"']);
      expect(await direct.lrange(s.list, 0, -1)).toEqual(['"c"']);
    } finally {
      await s.close();
    }
  });
});
