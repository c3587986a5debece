/** One dispatched server-sent event. */
export interface SseMessage {
  /** The `event:` field, `message` when absent. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The last `id:` seen on the stream so far (the SSE "last event ID"). */
  id: string | undefined;
}

/**
 * An incremental `text/event-stream` parser (the WHATWG algorithm): feed it text as it arrives,
 * get complete events back. Comments (`: ping`) are dropped; `retry:` is exposed as `retryMs`.
 * @example
 * const p = new SseParser();
 * p.push('id: 1\nevent: task\ndata: {"a":1}\n\n'); // [{ event: 'task', data: '{"a":1}', id: '1' }]
 */
export class SseParser {
  /** The reconnection delay the server asked for, if it did. */
  retryMs: number | undefined;
  lastEventId: string | undefined;
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private sawData = false;
  /** A chunk ended in `\r`: a `\n` starting the next chunk belongs to the same line break. */
  private pendingCr = false;

  constructor(lastEventId?: string) {
    this.lastEventId = lastEventId;
  }

  push(chunk: string): SseMessage[] {
    let text = chunk;
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const out: SseMessage[] = [];
    const lineBreak = /\r\n|\r|\n/g;
    let start = 0;
    for (let match = lineBreak.exec(this.buffer); match; match = lineBreak.exec(this.buffer)) {
      // A lone `\r` at the very end may be the first half of `\r\n`.
      if (match[0] === '\r' && match.index === this.buffer.length - 1) this.pendingCr = true;
      const message = this.line(this.buffer.slice(start, match.index));
      if (message) out.push(message);
      start = match.index + match[0].length;
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string): SseMessage | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data.push(value);
        this.sawData = true;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break;
    }
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    const message: SseMessage | undefined = this.sawData
      ? { event: this.event || 'message', data: this.data.join('\n'), id: this.lastEventId }
      : undefined;
    this.event = '';
    this.data = [];
    this.sawData = false;
    return message;
  }
}
