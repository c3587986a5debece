/**
 * The API's request log names the trace a request belongs to: a request with a well-formed W3C
 * `traceparent` is logged with its `traceId` (the trace a submit's task continues, decision 65),
 * so an operator can go from a log line to the trace; a missing or malformed one logs none.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { trackRequest } from '../apps/api/src/http/request-log.js';

const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
    done();
  },
});
const logger = pino({ level: 'info' }, sink);
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    trackRequest(logger, undefined, req, res);
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function logged(path: string, headers: Record<string, string>) {
  await (await fetch(`${base}${path}`, { headers })).text();
  for (let i = 0; i < 50 && !lines.some((l) => l.url === path); i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  return lines.find((l) => l.url === path);
}

it('logs the traceId of a well-formed traceparent, and none for a missing or malformed one', async () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const traced = await logged('/traced', { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
  expect(traced).toMatchObject({ msg: 'request', url: '/traced', status: 200, traceId });
  const plain = await logged('/plain', {});
  expect(plain).toMatchObject({ msg: 'request', url: '/plain' });
  expect(plain).not.toHaveProperty('traceId');
  for (const [path, value] of [
    ['/zeros', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
    ['/short', '00-4bf92f35-00f067aa0ba902b7-01'],
    ['/junk', 'not a traceparent'],
  ] as const) {
    const line = await logged(path, { traceparent: value });
    expect(line, path).toMatchObject({ url: path });
    expect(line, path).not.toHaveProperty('traceId');
  }
});
