import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { lookup } from 'node:dns/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WEBHOOK_HEADERS, webhookSignature } from '@longrun/core';
import { WebhookTargetPolicy } from '@longrun/engine';
import { waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import {
  KEY_A,
  KEY_B,
  startInProcessApi,
  startWorker,
  type InProcessApi,
} from './helpers/service.js';
import { readSse } from './helpers/sse.js';

let api: InProcessApi;
let replica: InProcessApi;
let worker: Proc;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  api = await startInProcessApi({ webhookAllow: ['127.0.0.1'] });
  replica = await startInProcessApi({ prefix: api.prefix, webhookAllow: ['127.0.0.1'] });
  worker = await startWorker(api.prefix, { LONGRUN_WEBHOOK_ALLOW: '127.0.0.1' });
});
afterAll(async () => {
  await worker?.stop();
  await replica?.close();
  await api?.close();
  receiver?.server.close();
});

async function submit(body: Record<string, unknown>): Promise<string> {
  const res = await api.http('POST', '/v1/jobs', { body });
  expect(res.status, res.text).toBe(202);
  return res.body.taskId;
}

describe('progress', () => {
  it('shows progress and statusMessage on the handle while a sleep runs', async () => {
    const id = await submit({ type: 'sleep', input: { ms: 2500 } });
    const res = await waitFor(async () => {
      const h = await api.http('GET', `/v1/jobs/${id}`);
      return typeof h.body.progress === 'number' ? h : undefined;
    });
    expect(res.body.statusMessage).toMatch(/^slept \d+ of 2500 ms$/);
  });
});

describe('server-sent events', () => {
  it('sends the handle, every change, the terminal event, then closes — through another API replica', async () => {
    const id = await submit({ type: 'sleep', input: { ms: 2200 } });
    const sse = await readSse(`${replica.url}/v1/jobs/${id}/events`, { key: KEY_A });
    expect(sse.status).toBe(200);
    expect(sse.contentType).toMatch(/^text\/event-stream/);
    expect(sse.retry).toBe(1000);
    expect(sse.closedByServer).toBe(true);
    const handles = sse.events.map((e) => JSON.parse(e.data));
    expect(sse.events.every((e) => e.event === 'task' && /^\d+$/.test(e.id ?? ''))).toBe(true);
    expect(handles[0].taskId).toBe(id);
    expect(handles.at(-1)).toMatchObject({ status: 'completed', result: { sleptMs: 2200 } });
    expect(handles.filter((h) => h.status === 'completed')).toHaveLength(1);
    expect(handles.some((h) => typeof h.progress === 'number')).toBe(true);
    const ids = sse.events.map((e) => e.id as string);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('resumes after Last-Event-ID without gaps', async () => {
    const id = await submit({ type: 'sleep', input: { ms: 2200 } });
    const head = await readSse(`${api.url}/v1/jobs/${id}/events`, { key: KEY_A, stopAfter: 2 });
    expect(head.events).toHaveLength(2);
    const resumed = await readSse(`${api.url}/v1/jobs/${id}/events`, {
      key: KEY_A,
      headers: { 'last-event-id': head.events[1]!.id! },
    });
    expect(resumed.closedByServer).toBe(true);
    const everything = await readSse(`${api.url}/v1/jobs/${id}/events?lastEventId=0`, {
      key: KEY_A,
    });
    const all = everything.events.map((e) => e.id);
    const start = all.indexOf(head.events[1]!.id!);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(resumed.events.map((e) => e.id)).toEqual(all.slice(start + 1));
    expect(JSON.parse(resumed.events.at(-1)!.data).status).toBe('completed');
  });

  it('streams an input_required task until it is answered', async () => {
    const id = await submit({ type: 'approval', input: { question: 'ok?' } });
    const reading = readSse(`${api.url}/v1/jobs/${id}/events`, { key: KEY_A });
    await waitFor(
      async () => (await api.http('GET', `/v1/jobs/${id}`)).body.status === 'input_required',
    );
    await api.http('POST', `/v1/jobs/${id}/input`, { body: { input: { approved: true } } });
    const statuses = (await reading).events.map((e) => JSON.parse(e.data).status);
    expect(statuses).toContain('input_required');
    expect(statuses.at(-1)).toBe('completed');
  });

  it('answers 404 to another tenant and 400 to a bad Last-Event-ID', async () => {
    const id = await submit({ type: 'echo', input: {} });
    expect((await readSse(`${api.url}/v1/jobs/${id}/events`, { key: KEY_B })).status).toBe(404);
    const bad = await readSse(`${api.url}/v1/jobs/${id}/events`, {
      key: KEY_A,
      headers: { 'last-event-id': 'x' },
    });
    expect(bad.status).toBe(400);
  });
});

/** Established TCP sockets of this process to `port` (/proc: the inodes of its fds). */
function redisSocketsOfThisProcess(port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (socket) inodes.add(socket[1]!);
    } catch {
      // closed between the listing and the read
    }
  }
  let count = 0;
  for (const table of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      const remotePort = parseInt(f[2]?.split(':')[1] ?? '', 16);
      if (f[3] === '01' && remotePort === port && inodes.has(f[9] ?? '')) count++;
    }
  }
  return count;
}

describe('long-poll', () => {
  it('holds GET …/result?wait until the task finishes', async () => {
    const id = await submit({ type: 'sleep', input: { ms: 1500 } });
    const res = await api.http('GET', `/v1/jobs/${id}/result?wait=20`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ taskId: id, status: 'completed', result: { sleptMs: 1500 } });
  });

  it('answers 409 with Retry-After when the wait ends first', async () => {
    const id = await submit({ type: 'sleep', input: { ms: 10_000 } });
    const res = await api.http('GET', `/v1/jobs/${id}/result?wait=1`);
    expect(res.status).toBe(409);
    expect(res.headers.get('retry-after')).toBe('1');
    await api.http('POST', `/v1/jobs/${id}/cancel`);
  });

  it.each(['wait=31', 'wait=-1', 'wait=x', 'other=1'])('answers 400 to ?%s', async (q) => {
    const id = await submit({ type: 'echo', input: {} });
    expect((await api.http('GET', `/v1/jobs/${id}/result?${q}`)).status).toBe(400);
  });

  it('holds many requests without a Redis connection each', async () => {
    const admin = new Redis(inject('redisUrl'));
    try {
      const clients = () =>
        redisSocketsOfThisProcess(Number(new URL(inject('redisUrl')).port || 6379));
      const before = clients();
      expect(before).toBeGreaterThan(0); // the count sees the API's own connections
      const id = await submit({ type: 'sleep', input: { ms: 1500 } });
      const held = Array.from({ length: 25 }, () =>
        api.http('GET', `/v1/jobs/${id}/result?wait=20`),
      );
      await waitFor(async () => api.events.waiting >= 25, { what: '25 waiters' });
      // No connection per request (25 would be +25): this process's own sockets to Redis (the API
      // runs in it), not the server's client list, which other test files' connections move.
      expect(clients()).toBeLessThanOrEqual(before + 2);
      // One subscription for the task however many wait on it, only while someone does.
      const channel = `${api.prefix}:task-events:${id}`;
      const subscribers = async () =>
        Number(((await admin.call('PUBSUB', 'NUMSUB', channel)) as [string, number])[1]);
      await waitFor(async () => (await subscribers()) === 1, { what: 'the task subscribed' });
      const results = await Promise.all(held);
      expect(results.every((r) => r.status === 200 && r.body.status === 'completed')).toBe(true);
      expect(api.events.waiting).toBe(0);
      await waitFor(async () => (await subscribers()) === 0, { what: 'the task unsubscribed' });
    } finally {
      admin.disconnect();
    }
  });
});

describe('webhooks', () => {
  it('POSTs every status change, signed, each with its own delivery id', async () => {
    const secret = 'whsec-0123456789abcdef';
    const id = await submit({
      type: 'approval',
      input: { question: 'Merge?' },
      callback: { url: `${receiver.url}/hook`, secret },
    });
    const asked = await waitFor(async () => receiver.find(id, 'input_required'), {
      what: 'input_required webhook',
    });
    await api.http('POST', `/v1/jobs/${id}/input`, {
      body: { input: { approved: true, comment: 'lgtm' } },
    });
    const done = await waitFor(async () => receiver.find(id, 'completed'), {
      what: 'completed webhook',
    });
    for (const hit of [asked, done]) {
      const ts = Number(hit.headers[WEBHOOK_HEADERS.timestamp.toLowerCase()]);
      expect(hit.headers[WEBHOOK_HEADERS.signature.toLowerCase()]).toBe(
        webhookSignature(secret, ts, hit.body),
      );
      expect(hit.headers[WEBHOOK_HEADERS.deliveryId.toLowerCase()]).toBe(hit.json.id);
      expect(hit.json.type).toBe('task.updated');
    }
    expect(done.json.task.result).toEqual({ approved: true, comment: 'lgtm' });
    expect(asked.json.task.inputRequest).toMatchObject({ message: 'Merge?' });
    expect(asked.json.id).not.toBe(done.json.id);
  });

  it('retries a delivery the receiver refused, with the same delivery id', async () => {
    const id = await submit({
      type: 'echo',
      input: { flaky: true },
      callback: { url: `${receiver.url}/flaky` },
    });
    const hit = await waitFor(async () => receiver.find(id, 'completed', 200), {
      what: 'retried webhook',
      timeoutMs: 20_000,
    });
    const attempts = receiver.hits.filter((h) => h.json.id === hit.json.id);
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(attempts[0]!.status).toBe(500);
    expect(hit.headers[WEBHOOK_HEADERS.signature.toLowerCase()]).toBeUndefined(); // no secret given
  });

  it.each([
    'http://10.0.0.5/hook',
    'http://192.168.1.10/hook',
    'http://172.20.0.1/hook',
    'http://169.254.169.254/latest',
    'http://[::1]:9/hook',
    'http://[fd00::1]/hook',
    'http://localhost:9/hook',
    'http://0.0.0.0/hook',
    // Private IPv4 addresses inside IPv6 ones, and CGNAT (issue 13).
    'http://[64:ff9b::a9fe:a9fe]/latest', // NAT64 of 169.254.169.254
    'http://[2002:a9fe:a9fe::]/latest', // 6to4
    'http://[::a9fe:a9fe]/latest', // IPv4-compatible
    'http://[::ffff:0:a9fe:a9fe]/latest', // SIIT (RFC 6145)
    'http://[::ffff:127.0.0.1]:9/hook', // IPv4-mapped loopback
    'http://[64:ff9b:1::a00:5]/hook', // local-use NAT64
    'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook', // Teredo
    'http://100.64.0.1/hook', // CGNAT
    'http://192.0.2.1/hook', // documentation (reserved)
    'http://user:pw@example.com/hook',
    'ftp://example.com/hook',
    // Other spellings of loopback, which delivery refused after resolving them (issue 27).
    'http://localhost./hook', // the root's trailing dot
    'http://foo.localhost./hook',
    'http://LocalHost../hook',
    'http://localhost.localdomain/hook',
    'http://ip6-localhost/hook',
    'http://ip6-loopback/hook',
    'http://0x7f.1/hook', // 127.0.0.1 in WHATWG's IPv4 forms
    'http://2130706433/hook',
    'http://[::ffff:7f00:1]/hook',
  ])('refuses %s at submit, before any connection, storing nothing', async (url) => {
    const strict = await startInProcessApi(); // no allow-list
    try {
      const res = await strict.http('POST', '/v1/jobs', {
        body: { type: 'echo', callback: { url } },
      });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toMatch(/^callback/);
      expect((await strict.http('GET', '/v1/jobs')).body.tasks).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });

  it('refuses loopback unless allowed, and checks resolved addresses before connecting', async () => {
    const strict = new WebhookTargetPolicy([]);
    expect(strict.refuseUrl('http://127.0.0.1:8080/x')).toMatch(/private or loopback/);
    expect(
      new WebhookTargetPolicy(['127.0.0.0/8']).refuseUrl('http://127.0.0.1:8080/x'),
    ).toBeNull();
    expect(strict.refuseUrl('https://hooks.example.com/x')).toBeNull(); // checked again at delivery
    expect(strict.refuseUrl('https://hooks.example.com./x')).toBeNull(); // the root's dot: the same
    for (const url of ['http://localhost./x', 'http://a.b.localhost./x', 'http://LOCALHOST/x']) {
      expect(strict.refuseUrl(url), url).toMatch(/localhost/);
    }
    // A host the allow-list names is allowed however it is spelled.
    const named = new WebhookTargetPolicy(['hooks.internal']);
    for (const url of ['http://hooks.internal/x', 'http://Hooks.Internal./x']) {
      expect(named.refuseUrl(url), url).toBeNull();
    }
    // Public addresses stay allowed, including a public IPv4 reached through NAT64 or 6to4.
    for (const url of [
      'http://8.8.8.8/x',
      'http://[2606:4700::1111]/x',
      'http://[64:ff9b::808:808]/x',
      'http://[2002:808:808::1]/x',
    ]) {
      expect(strict.refuseUrl(url), url).toBeNull();
    }
    const refused = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      strict.lookup('localhost', {}, (err) => resolve(err)),
    );
    expect(refused?.code).toBe('EWEBHOOKTARGET');
  });

  it('never connects to a hostname that resolves to a private address', async () => {
    const name = hostname();
    const resolved = await lookup(name).catch(() => null);
    if (!resolved || !/^127\./.test(resolved.address)) return; // needs a hostname mapped to loopback
    const strict = await startInProcessApi(); // submit-time check passes: it is a plain hostname
    const w = await startWorker(strict.prefix); // no LONGRUN_WEBHOOK_ALLOW
    try {
      const before = receiver.connections;
      const url = `http://${name}:${new URL(receiver.url).port}/hook`;
      const res = await strict.http('POST', '/v1/jobs', {
        body: { type: 'echo', callback: { url } },
      });
      expect(res.status).toBe(202);
      const refused = await waitFor(
        async () =>
          w.lines.find((l) => l.includes('webhook delivery failed') && l.includes('not allowed')),
        {
          what: 'delivery refused',
        },
      );
      expect(receiver.connections).toBe(before);
      // A target refused at delivery fails once: it is not retried (10 times over 17 minutes).
      expect(JSON.parse(refused)).toMatchObject({ final: true });
      const job = await waitFor(async () => {
        const failed = await strict.parts.jobs.webhookQueue.getFailed();
        return failed.length > 0 ? failed[0] : undefined;
      });
      expect(job?.attemptsMade).toBe(1);
    } finally {
      await w.stop();
      await strict.close();
    }
  });
});

interface Hit {
  path: string;
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
  json: {
    id: string;
    type: string;
    task: { taskId: string; status: string; [k: string]: unknown };
  };
}
interface Receiver {
  server: Server;
  url: string;
  hits: Hit[];
  connections: number;
  find(taskId: string, status: string, httpStatus?: number): Hit | undefined;
}

/** A webhook receiver on 127.0.0.1; `/flaky` fails the first delivery of each id with 500. */
async function startReceiver(): Promise<Receiver> {
  const hits: Hit[] = [];
  const seen = new Set<string>();
  const receiver: Receiver = {
    server: createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const json = JSON.parse(body) as Hit['json'];
        let status = 200;
        if (req.url === '/flaky' && !seen.has(json.id)) {
          seen.add(json.id);
          status = 500;
        }
        hits.push({ path: req.url ?? '', status, headers: req.headers, body, json });
        res.writeHead(status).end();
      });
    }),
    url: '',
    hits,
    connections: 0,
    find: (taskId, status, httpStatus = 200) =>
      hits.find(
        (h) =>
          h.json.task.taskId === taskId && h.json.task.status === status && h.status === httpStatus,
      ),
  };
  receiver.server.on('connection', () => (receiver.connections += 1));
  await new Promise<void>((r) => receiver.server.listen(0, '127.0.0.1', r));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
  return receiver;
}
