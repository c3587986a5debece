// One tenant's slow webhook receivers must not hold the deliveries of another (issue 13): each
// delivery's whole exchange is bounded in time, and a tenant has a bounded share of the slots.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { httpClient, waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import {
  promptReceiver,
  trickleReceiver,
  type PromptReceiver,
  type TrickleReceiver,
} from './helpers/receivers.js';
import { KEY_B, startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';

const SLOW = 40; // slow receivers' tasks of tenant alpha
const TIMEOUT_MS = 3000; // LONGRUN_WEBHOOK_TIMEOUT_MS for this test's worker

let api: InProcessApi;
let worker: Proc;
/** Reads the request, then answers one byte every second and never finishes. */
let trickle: TrickleReceiver;
let fast: PromptReceiver;

beforeAll(async () => {
  trickle = await trickleReceiver({ byteEveryMs: 1000 });
  fast = await promptReceiver();
  api = await startInProcessApi({ webhookAllow: ['127.0.0.1'] });
  worker = await startWorker(api.prefix, {
    LONGRUN_WEBHOOK_ALLOW: '127.0.0.1',
    LONGRUN_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  });
});

afterAll(async () => {
  await worker?.stop();
  await api?.close();
  await trickle?.close();
  await fast?.close();
});

it("bounds each delivery's whole exchange, and another tenant's webhook is not held behind them", async () => {
  // Tenant alpha: 40 completed tasks whose receivers trickle (more than the 16 delivery slots).
  const alpha = api.http;
  const submitted = await Promise.all(
    Array.from({ length: SLOW }, () =>
      alpha('POST', '/v1/jobs', {
        body: { type: 'echo', input: {}, callback: { url: trickle.url } },
      }),
    ),
  );
  expect(submitted.every((r) => r.status === 202)).toBe(true);
  await waitFor(async () => (trickle.connections.length >= 4 ? true : undefined), {
    what: 'the slow receivers to be called',
    timeoutMs: 10_000,
  });

  // Tenant beta: one task with a prompt receiver. Its completed webhook must arrive long before
  // alpha's deliveries could free the slots they would otherwise hold.
  const beta = httpClient(api.url, KEY_B);
  const sentAt = performance.now();
  const res = await beta('POST', '/v1/jobs', {
    body: { type: 'echo', input: { who: 'beta' }, callback: { url: fast.url } },
  });
  expect(res.status).toBe(202);
  const hit = await waitFor(
    async () =>
      fast.deliveries.find(
        (h) => h.body.includes(res.body.taskId) && /"status":"completed"/.test(h.body),
      ),
    { what: "beta's webhook", timeoutMs: 20_000 },
  );
  expect(hit.at - sentAt).toBeLessThan(TIMEOUT_MS);

  // Every slow exchange was cut at the bound (plus scheduling slack), not held open. Retries
  // keep opening new ones, so look at those old enough to have been cut.
  await new Promise((r) => setTimeout(r, TIMEOUT_MS + 2000));
  const horizon = performance.now() - TIMEOUT_MS - 1500;
  const old = trickle.connections.filter((c) => c.opened < horizon);
  expect(old.length).toBeGreaterThanOrEqual(4);
  for (const c of old) {
    expect(c.closed, 'a slow exchange still open').toBeDefined();
    expect(c.closed! - c.opened).toBeLessThan(TIMEOUT_MS + 1500);
  }
});
