import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { TaskEvent, TaskHandle } from '@longrun/core';
import { TaskEvents, TaskLog, TaskStore, TaskWatch, taskKeys } from '@longrun/engine/internal';
import { newRecord } from './helpers/records.js';
import { uniquePrefix } from './helpers/service.js';

const redis = new Redis(inject('redisUrl'));
const subscriber = new Redis(inject('redisUrl'));
afterAll(async () => {
  await subscriber.quit();
  await redis.quit();
});

/**
 * A real task log whose reads can let a real write land right after them, before the watch's
 * next read: the interleavings that a busy machine produces now and then, made every time.
 */
class InterleavedLog extends TaskLog {
  afterRead: ((events: TaskEvent[]) => Promise<void>) | undefined;

  override async events(id: string, afterId: string | undefined, count?: number) {
    const events = await super.events(id, afterId, count);
    const step = this.afterRead;
    if (step) await step(events);
    return events;
  }
}

function watchOn(prefix: string, store: TaskStore, log: TaskLog): TaskWatch {
  return new TaskWatch({
    store,
    log,
    events: new TaskEvents(subscriber, taskKeys(prefix).eventsChannel),
    pollIntervalMs: 1000,
    redis: (operation) => operation(),
    heartbeatMs: 60_000,
  });
}

/** Streams a watch into a list until it ends (or `timeoutMs`). */
async function collect(
  watch: TaskWatch,
  tenant: string,
  id: string,
  timeoutMs = 10_000,
): Promise<{ handles: TaskHandle[]; ended: boolean }> {
  const open = await watch.open(tenant, id);
  if (open.kind !== 'open') throw new Error('not found');
  const handles = open.first ? [open.first.handle] : [];
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      stop();
      resolve({ handles, ended: false });
    }, timeoutMs);
    const stop = open.start({
      send: (handle) => handles.push(handle),
      heartbeat: () => undefined,
      end: () => {
        clearTimeout(timer);
        resolve({ handles, ended: true });
      },
    });
  });
}

describe('TaskWatch', () => {
  it('sends the terminal event when the task ends between its read of the events and of the record', async () => {
    const prefix = uniquePrefix();
    const store = new TaskStore(redis, prefix, 86_400_000);
    const log = new InterleavedLog(redis, store.keys);
    const task = newRecord();
    await store.create(task);
    // The watch's first read of events after the handle finds nothing new: the task completes
    // right then, before the watch reads the record and sees it terminal.
    log.afterRead = async (events) => {
      if (events.length > 0) return;
      log.afterRead = undefined;
      await store.transition(task.id, 'complete', { result: { n: 1 } });
    };
    const { handles, ended } = await collect(watchOn(prefix, store, log), task.tenant, task.id);
    expect(ended).toBe(true);
    expect(handles.map((h) => h.status)).toEqual(['working', 'completed']);
    expect(handles.at(-1)).toMatchObject({ status: 'completed', result: { n: 1 } });
  });

  it('streams every change in order, then ends on the terminal one', async () => {
    const prefix = uniquePrefix();
    const store = new TaskStore(redis, prefix, 86_400_000);
    const log = new InterleavedLog(redis, store.keys);
    const task = newRecord();
    await store.create(task);
    const steps = [
      () => store.transition(task.id, 'start'),
      () => store.transition(task.id, 'progress', { progress: 50 }),
      () => store.transition(task.id, 'complete', { result: { ok: true } }),
    ];
    log.afterRead = async () => {
      await steps.shift()?.();
    };
    const { handles, ended } = await collect(watchOn(prefix, store, log), task.tenant, task.id);
    expect(ended).toBe(true);
    expect(handles.map((h) => h.status)).toEqual(['working', 'working', 'working', 'completed']);
    expect(handles[2]?.progress).toBe(50);
  });

  it('ends at once on a task that is already terminal, and is notFound for another tenant', async () => {
    const prefix = uniquePrefix();
    const store = new TaskStore(redis, prefix, 86_400_000);
    const log = new TaskLog(redis, store.keys);
    const task = newRecord();
    await store.create(task);
    await store.transition(task.id, 'fail', { error: { message: 'boom' } });
    const watch = watchOn(prefix, store, log);
    expect(await watch.open('someone-else', task.id)).toEqual({ kind: 'notFound' });
    const { handles, ended } = await collect(watch, task.tenant, task.id);
    expect(ended).toBe(true);
    expect(handles.map((h) => h.status)).toEqual(['failed']);
  });
});
