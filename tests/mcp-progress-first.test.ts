/**
 * A waiting MCP call with a progressToken is sent the progress the task already shows when the
 * wait starts, not only later changes. The conformance suite's `tools-call-with-progress` failed
 * now and then in CI ("Expected at least 3 progress notifications, got 2"): the job reported 0 %
 * before the call's watch opened, and the watch's first read was never turned into a
 * notification. Here a job reports 40 % and then holds until the test lets it go, so the only way
 * the call sees 40 is from that first read.
 */
import { pino } from 'pino';
import { z } from 'zod';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWorker, defineJobType, type LongrunWorker } from '@longrun/worker';
import type { TaskHandle } from '@longrun/core';
import { followTask } from '../apps/api/src/mcp/task-follow.js';
import { waitFor } from './helpers/http.js';
import { startInProcessApi, type InProcessApi, workerRedis } from './helpers/service.js';

let api: InProcessApi;
let worker: LongrunWorker;
const releases = new Map<string, () => void>();

const holdJob = defineJobType({
  name: 'hold-at-40',
  input: z.object({ key: z.string() }),
  timeoutMs: 30_000,
  handler: async ({ key }, ctx) => {
    await ctx.progress(40, 'forty');
    await new Promise<void>((resolve) => releases.set(key, resolve));
    return { done: true };
  },
});

beforeAll(async () => {
  api = await startInProcessApi({ register: false });
  worker = createWorker({
    ...workerRedis(),
    prefix: api.prefix,
    jobs: [holdJob],
    logger: pino({ level: 'silent' }),
    webhooks: false,
    reconcile: false,
  });
  await worker.start();
});
afterAll(async () => {
  for (const release of releases.values()) release();
  await worker?.close();
  await api?.close();
});

it('a follow with onUpdate is given the progress the task shows when it starts', async () => {
  const submitted = await waitFor(
    async () => {
      const r = await api.http('POST', '/v1/jobs', {
        body: { type: 'hold-at-40', input: { key: 'a' } },
      });
      return r.status === 202 ? r : undefined;
    },
    { what: 'hold-at-40 accepted' },
  );
  const taskId = submitted.body.taskId as string;
  await waitFor(
    async () =>
      (await api.http('GET', `/v1/jobs/${taskId}`)).body.progress === 40 ? true : undefined,
    { what: 'the task at 40 %' },
  );
  const seen: TaskHandle[] = [];
  const controller = new AbortController();
  const following = followTask(api.engine, 'alpha', taskId, {
    waitMs: 30_000,
    untilStatusChange: false,
    signal: controller.signal,
    onUpdate: (handle) => seen.push(handle),
  });
  // Nothing changes while the job holds: 40 can only come from the wait's first read.
  await waitFor(async () => (seen.length > 0 ? true : undefined), {
    what: 'an update with the progress already shown',
    timeoutMs: 3000,
  }).catch(() => undefined);
  expect(seen.map((h) => h.progress)).toEqual([40]);
  releases.get('a')?.();
  const last = await following;
  expect(last?.status).toBe('completed');
  expect(seen.at(-1)?.status).toBe('completed');
  controller.abort();
});
