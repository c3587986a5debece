/**
 * Issue 27 #15: long-lived requests are capped per tenant (LONGRUN_TENANT_MAX_STREAMS) and per
 * process (LONGRUN_MAX_STREAMS), one count for every door: SSE event streams, MCP `tasks/result`,
 * A2A streams. Past a cap: 429 `too-many-streams` with Retry-After; other tenants and /healthz
 * keep working; a slot comes back however a stream ends. And an MCP `ping` naming an unknown
 * related task is answered. The API runs in this process with no worker, so submitted tasks stay
 * open and their streams with them.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient, waitFor } from './helpers/http.js';
import { KEY_A, KEY_B, startInProcessApi, type InProcessApi } from './helpers/service.js';

let api: InProcessApi;
/** Every stream a test opened, closed at the end. */
const opened = new Set<AbortController>();

beforeAll(async () => {
  api = await startInProcessApi({ streams: { perTenant: 2, total: 3 } });
});

afterAll(async () => {
  for (const stream of opened) stream.abort();
  await api?.close();
});

/** A task of `key`'s tenant that stays open (no worker runs here). */
async function openTask(key = KEY_A): Promise<string> {
  const created = await httpClient(api.url, key)('POST', '/v1/jobs', {
    body: { type: 'sleep', input: { ms: 1000 } },
  });
  expect(created.status, created.text).toBe(202);
  return created.body.taskId as string;
}

interface Opened {
  status: number;
  headers: Headers;
  /** The body: the problem when refused. */
  text?: string;
  stop: () => void;
}

/** Opens a long-lived request and returns once its headers are in (the body is left open). */
async function open(path: string, key: string, init: RequestInit = {}): Promise<Opened> {
  const stop = new AbortController();
  opened.add(stop);
  const res = await fetch(`${api.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) },
    signal: stop.signal,
  });
  const result: Opened = { status: res.status, headers: res.headers, stop: () => stop.abort() };
  if (res.status !== 200) {
    result.text = await res.text();
    opened.delete(stop);
  } else {
    // Keep reading so the stream is consumed as a client would; errors come from abort().
    void res.body
      ?.pipeTo(new WritableStream())
      .catch(() => undefined)
      .finally(() => opened.delete(stop));
  }
  return result;
}

const events = async (key = KEY_A) => open(`/v1/jobs/${await openTask(key)}/events`, key);

/** Until `key`'s tenant can open an event stream again (a slot came back): that stream. */
async function whenEventsOpen(key = KEY_A): Promise<Opened> {
  const taskId = await openTask(key);
  return waitFor(
    async () => {
      const stream = await open(`/v1/jobs/${taskId}/events`, key);
      return stream.status === 200 ? stream : undefined;
    },
    { what: 'a stream slot to come back' },
  );
}

function expectTooManyStreams(refused: Opened): void {
  expect(refused.status).toBe(429);
  expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(JSON.parse(refused.text ?? '{}')).toMatchObject({
    type: '/problems/too-many-streams',
    status: 429,
    title: 'Too many open streams',
  });
}

/** A 2025-11-25 MCP POST (the door's session ids carry the session: any well-formed one works). */
const mcpHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
  'mcp-session-id': 'lr1.AAAAAAAAAAAAAAAAAAAAAA.-',
};

describe('stream caps (issue 27 #15)', { timeout: 60_000 }, () => {
  it("a tenant's streams past its cap get 429; another tenant and /healthz still answer; a closed stream frees its slot", async () => {
    const first = await events();
    const second = await events();
    expect([first.status, second.status]).toEqual([200, 200]);
    expectTooManyStreams(await events());

    // Tenant beta opens one (the process has 3 slots), and health does not wait on streams.
    const theirs = await events(KEY_B);
    expect(theirs.status).toBe(200);
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    // The process is full now: beta, under its own cap, is refused by the total.
    const overTotal = await events(KEY_B);
    expectTooManyStreams(overTotal);
    expect(JSON.parse(overTotal.text ?? '{}').detail).toMatch(/LONGRUN_MAX_STREAMS/);
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);

    // The client goes away: its slot comes back.
    first.stop();
    const again = await whenEventsOpen();
    expectTooManyStreams(await events());
    for (const s of [second, theirs, again]) s.stop();
    await whenEventsOpen().then((s) => s.stop());
  });

  it('a stream whose task ends gives its slot back', async () => {
    const taskId = await openTask();
    const watching = await open(`/v1/jobs/${taskId}/events`, KEY_A);
    const other = await events();
    expect([watching.status, other.status]).toEqual([200, 200]);
    expectTooManyStreams(await events());
    // Cancelled, the task is terminal: the server ends its stream, and the slot is free.
    expect((await api.http('POST', `/v1/jobs/${taskId}/cancel`)).status).toBe(200);
    const next = await whenEventsOpen();
    other.stop();
    next.stop();
    await whenEventsOpen().then((s) => s.stop());
  });

  it('MCP tasks/result and A2A SubscribeToTask count against the same cap', async () => {
    // One MCP tasks/result held on an open task, and one A2A subscription.
    const held = await open('/mcp', KEY_A, {
      method: 'POST',
      headers: mcpHeaders,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tasks/result',
        params: { taskId: await openTask() },
      }),
    });
    expect(held.status).toBe(200);
    // With one slot of two taken by MCP, one SSE stream fits and the next does not.
    const sse = await events();
    expect(sse.status).toBe(200);
    expectTooManyStreams(await events());
    // A2A: refused as well, before it starts anything.
    const subscribe = (taskId: string) =>
      open('/a2a/jsonrpc', KEY_A, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'SubscribeToTask',
          params: { id: taskId },
        }),
      });
    const refusedA2a = await subscribe(await openTask());
    expectTooManyStreams(refusedA2a);
    // The MCP call ends: an A2A subscription takes its slot, and then SSE is refused again.
    held.stop();
    const taskId = await openTask();
    const a2a = await waitFor(
      async () => {
        const s = await subscribe(taskId);
        return s.status === 200 ? s : undefined;
      },
      { what: 'the MCP slot to come back' },
    );
    expect(a2a.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expectTooManyStreams(await events());
    a2a.stop();
    sse.stop();
    await whenEventsOpen().then((s) => s.stop());
  });

  it('an MCP ping whose _meta names an unknown related task is answered', async () => {
    const res = await fetch(`${api.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, ...mcpHeaders },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'ping-1',
        method: 'ping',
        params: { _meta: { 'io.modelcontextprotocol/related-task': { taskId: randomUUID() } } },
      }),
      // Without an answer the body never ends: fail clearly instead of at the test's timeout.
      signal: AbortSignal.timeout(10_000),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const data = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as unknown);
    const answers = text.trimStart().startsWith('{') ? [JSON.parse(text) as unknown] : data;
    expect(answers).toEqual([{ jsonrpc: '2.0', id: 'ping-1', result: {} }]);
  });
});
