// One tenant's slow webhook receivers must not hold the deliveries of another (issue 13): each
// delivery's whole exchange is bounded in time, and a tenant has a bounded share of the slots.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { httpClient, waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { KEY_B, startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';

const SLOW = 40; // slow receivers' tasks of tenant alpha
const TIMEOUT_MS = 3000; // LONGRUN_WEBHOOK_TIMEOUT_MS for this test's worker

let api: InProcessApi;
let worker: Proc;
let trickle: Server;
let trickleUrl: string;
/** When each connection to the slow receiver opened and closed. */
const connections: { opened: number; closed?: number }[] = [];
const sockets = new Set<Socket>();
let fast: Server;
let fastUrl: string;
const fastHits: { at: number; body: string }[] = [];

beforeAll(async () => {
  // A receiver that reads the request, then answers one byte every second and never finishes:
  // the socket is never idle, so an idle timeout alone never fires.
  trickle = createServer((socket) => {
    const entry: { opened: number; closed?: number } = { opened: Date.now() };
    connections.push(entry);
    sockets.add(socket);
    const reply = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n';
    let i = 0;
    const timer = setInterval(() => {
      if (!socket.writable) return;
      socket.write(reply[i % reply.length]!);
      i += 1;
    }, 1000);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      entry.closed = Date.now();
      sockets.delete(socket);
    });
  });
  await new Promise<void>((r) => trickle.listen(0, '127.0.0.1', r));
  trickleUrl = `http://127.0.0.1:${(trickle.address() as AddressInfo).port}/hook`;

  fast = createServer((socket) => {
    let body = '';
    socket.on('data', (chunk) => {
      body += chunk.toString();
      if (body.includes('\r\n\r\n') && /"status":"completed"/.test(body)) {
        fastHits.push({ at: Date.now(), body });
      }
      socket.end('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n');
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => fast.listen(0, '127.0.0.1', r));
  fastUrl = `http://127.0.0.1:${(fast.address() as AddressInfo).port}/hook`;

  api = await startInProcessApi({ webhookAllow: ['127.0.0.1'] });
  worker = await startWorker(api.prefix, {
    LONGRUN_WEBHOOK_ALLOW: '127.0.0.1',
    LONGRUN_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  });
});

afterAll(async () => {
  await worker?.stop();
  await api?.close();
  for (const s of sockets) s.destroy();
  await new Promise((r) => trickle?.close(r));
  await new Promise((r) => fast?.close(r));
});

it("bounds each delivery's whole exchange, and another tenant's webhook is not held behind them", async () => {
  // Tenant alpha: 40 completed tasks whose receivers trickle (more than the 16 delivery slots).
  const alpha = api.http;
  const submitted = await Promise.all(
    Array.from({ length: SLOW }, () =>
      alpha('POST', '/v1/jobs', {
        body: { type: 'echo', input: {}, callback: { url: trickleUrl } },
      }),
    ),
  );
  expect(submitted.every((r) => r.status === 202)).toBe(true);
  await waitFor(async () => (connections.length >= 4 ? true : undefined), {
    what: 'the slow receivers to be called',
    timeoutMs: 10_000,
  });

  // Tenant beta: one task with a prompt receiver. Its completed webhook must arrive long before
  // alpha's deliveries could free the slots they would otherwise hold.
  const beta = httpClient(api.url, KEY_B);
  const sentAt = Date.now();
  const res = await beta('POST', '/v1/jobs', {
    body: { type: 'echo', input: { who: 'beta' }, callback: { url: fastUrl } },
  });
  expect(res.status).toBe(202);
  const hit = await waitFor(async () => fastHits.find((h) => h.body.includes(res.body.taskId)), {
    what: "beta's webhook",
    timeoutMs: 20_000,
  });
  expect(hit.at - sentAt).toBeLessThan(TIMEOUT_MS);

  // Every slow exchange was cut at the bound (plus scheduling slack), not held open. Retries
  // keep opening new ones, so look at those old enough to have been cut.
  await new Promise((r) => setTimeout(r, TIMEOUT_MS + 2000));
  const horizon = Date.now() - TIMEOUT_MS - 1500;
  const old = connections.filter((c) => c.opened < horizon);
  expect(old.length).toBeGreaterThanOrEqual(4);
  for (const c of old) {
    expect(c.closed, 'a slow exchange still open').toBeDefined();
    expect(c.closed! - c.opened).toBeLessThan(TIMEOUT_MS + 1500);
  }
});
