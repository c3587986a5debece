import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { readV2Message } from './framing.js';

const TASKS = 'io.modelcontextprotocol/tasks';

function request(method: string, params: Record<string, unknown>, tasks = true) {
  return {
    jsonrpc: '2.0',
    id: 7,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS]: {} } } : {},
      },
    },
  };
}

const headers = (extra: IncomingHttpHeaders = {}): IncomingHttpHeaders => ({
  'mcp-protocol-version': '2026-07-28',
  ...extra,
});

describe('the 2026-07-28 framing', () => {
  it('reads a request, its capabilities and the headers mirroring it', () => {
    const call = readV2Message(
      headers({ 'mcp-method': 'tools/call', 'mcp-name': 'echo' }),
      request('tools/call', { name: 'echo' }),
    );
    expect(call).toMatchObject({
      kind: 'request',
      request: { id: 7, method: 'tools/call', tasks: true },
    });
    const get = readV2Message(
      headers({ 'mcp-method': 'tasks/get', 'mcp-name': 'abc' }),
      request('tasks/get', { taskId: 'abc' }, false),
    );
    expect(get).toMatchObject({ kind: 'request', request: { tasks: false } });
  });

  it('refuses headers that do not mirror the body (-32020, 400)', () => {
    const cases: [IncomingHttpHeaders, unknown][] = [
      [headers({ 'mcp-name': 'echo' }), request('tools/call', { name: 'echo' })],
      [
        headers({ 'mcp-method': 'tools/list', 'mcp-name': 'echo' }),
        request('tools/call', { name: 'echo' }),
      ],
      [
        headers({ 'mcp-method': 'tools/call', 'mcp-name': 'sleep' }),
        request('tools/call', { name: 'echo' }),
      ],
      [headers({ 'mcp-method': 'tasks/get' }), request('tasks/get', { taskId: 'abc' })],
      [
        headers({ 'mcp-method': 'tools/list' }),
        { ...request('tools/list', {}), params: { _meta: {} } },
      ],
    ];
    for (const [h, body] of cases) {
      expect(readV2Message(h, body)).toMatchObject({
        kind: 'error',
        status: 400,
        error: { code: -32020 },
      });
    }
  });

  it('refuses another protocol version (-32022) and what is not one request', () => {
    expect(
      readV2Message(
        { 'mcp-protocol-version': '2030-01-01', 'mcp-method': 'ping' },
        request('ping', {}),
      ),
    ).toMatchObject({
      error: { code: -32022, data: { supported: ['2026-07-28'], requested: '2030-01-01' } },
    });
    expect(readV2Message(headers(), [request('ping', {})])).toMatchObject({
      error: { code: -32600 },
    });
    expect(readV2Message(headers(), { jsonrpc: '2.0', method: 'notifications/x' })).toEqual({
      kind: 'accepted',
    });
    expect(readV2Message(headers(), { jsonrpc: '2.0', id: 3, result: {} })).toEqual({
      kind: 'accepted',
    });
  });
});
