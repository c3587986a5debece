import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.js';

describe('SseParser', () => {
  it('parses events, ids, retry and skips comments', () => {
    const p = new SseParser();
    const out = p.push('retry: 2500\n\n: ping\n\nid: 1-0\nevent: task\ndata: {"a":1}\n\n');
    expect(out).toEqual([{ event: 'task', data: '{"a":1}', id: '1-0' }]);
    expect(p.retryMs).toBe(2500);
    expect(p.lastEventId).toBe('1-0');
  });

  it('joins multi-line data and defaults the event name to message', () => {
    expect(new SseParser().push('data: a\ndata:b\ndata\n\n')).toEqual([
      { event: 'message', data: 'a\nb\n', id: undefined },
    ]);
  });

  it('keeps partial lines and CRLF split across chunks', () => {
    const p = new SseParser('0-0');
    expect(p.push('id: 2-0\r')).toEqual([]);
    expect(p.push('\nevent: task\r\ndata: {"b"')).toEqual([]);
    expect(p.push(':2}\r\n\r')).toEqual([{ event: 'task', data: '{"b":2}', id: '2-0' }]);
    expect(p.push('\n')).toEqual([]); // the \n completing the \r\n, not a second blank line
    expect(p.push('data: x\r\r')).toEqual([{ event: 'message', data: 'x', id: '2-0' }]);
  });

  it('keeps the last id across events and ignores ids with NUL and bad retry values', () => {
    const p = new SseParser();
    p.push('id: 3-0\ndata: 1\n\n');
    const [second] = p.push('id: x\0y\nretry: soon\ndata: 2\n\n');
    expect(second?.id).toBe('3-0');
    expect(p.retryMs).toBeUndefined();
  });
});
