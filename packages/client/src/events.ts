import { isTerminal, taskHandleSchema, type TaskHandle } from '@longrun/core';
import { LongrunError, LongrunNetworkError } from './errors.js';
import { anySignal, backoffDelay, delay, isTransientStatus, parseRetryAfter } from './retry.js';
import { SseParser } from './sse.js';
import { errorFrom, invalidResponse, type Transport } from './transport.js';

/** One update from a task's event stream. */
export interface TaskUpdate {
  /** The event id: pass it as `lastEventId` to resume after this update. */
  id: string | undefined;
  /** The task handle right after the change. */
  task: TaskHandle;
}

export interface EventsOptions {
  /** Resume after this event id (what the last {@link TaskUpdate} carried). */
  lastEventId?: string;
  /** Stops the stream; the iterator then throws the signal's reason. */
  signal?: AbortSignal;
  /**
   * A connection that has sent nothing (not even a heartbeat) for this long is considered dead
   * and reopened. Default 45 s: the server sends a heartbeat every 15 s.
   */
  idleTimeoutMs?: number;
}

/** Reconnect delay when the server has not said (`retry:`), as browsers do. */
const DEFAULT_RECONNECT_MS = 1000;

/**
 * Follows `GET /v1/jobs/<id>/events` until the terminal event, reopening the stream with
 * `Last-Event-ID` whenever the connection drops, so no update is missed or repeated.
 */
export async function* followEvents(
  transport: Transport,
  id: string,
  opts: EventsOptions = {},
): AsyncGenerator<TaskUpdate, void, undefined> {
  const { signal } = opts;
  const idleTimeoutMs = opts.idleTimeoutMs ?? 45_000;
  const parser = new SseParser(opts.lastEventId);
  let failures = 0;
  for (;;) {
    if (signal?.aborted) throw signal.reason;
    const connection = new AbortController();
    const url = transport.url(`v1/jobs/${encodeURIComponent(id)}/events`);
    const headers = transport.headers({ accept: 'text/event-stream', 'cache-control': 'no-cache' });
    if (parser.lastEventId !== undefined) headers['last-event-id'] = parser.lastEventId;
    let retryAfter: number | undefined;
    try {
      const res = await fetchStream(transport, url, headers, anySignal(signal, connection.signal));
      if (!res.ok) {
        const error = await errorFrom(res);
        if (!isTransientStatus(res.status)) throw error;
        retryAfter = error.retryAfter ?? parseRetryAfter(res.headers.get('retry-after'));
      } else {
        const type = res.headers.get('content-type') ?? '';
        if (!type.startsWith('text/event-stream')) {
          await res.body?.cancel();
          throw invalidResponse(res.status, `expected text/event-stream, got "${type}"`);
        }
        for await (const message of read(res, parser, connection, idleTimeoutMs)) {
          failures = 0;
          if (message.event !== 'task') continue;
          const task = parseHandle(message.data, res.status);
          yield { id: message.id, task };
          if (isTerminal(task.status)) return;
        }
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      // A dropped connection (or our idle timeout) is expected: reconnect. Anything else is not.
      if (error instanceof LongrunError && !(error instanceof LongrunNetworkError)) throw error;
    } finally {
      connection.abort();
    }
    const wait =
      failures === 0 && retryAfter === undefined
        ? (parser.retryMs ?? DEFAULT_RECONNECT_MS)
        : backoffDelay(failures, transport.retry, retryAfter);
    failures++;
    await delay(wait, signal);
  }
}

async function fetchStream(
  transport: Transport,
  url: URL,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<Response> {
  // The stream is long-lived: only the wait for response headers is bounded by the request
  // timeout; after that the idle timer watches the connection.
  const headersArrived = new AbortController();
  const timer = setTimeout(
    () => headersArrived.abort(new Error('no response headers')),
    transport.requestTimeoutMs,
  );
  try {
    return await transport.fetch(url, { headers }, anySignal(signal, headersArrived.signal), null);
  } finally {
    clearTimeout(timer);
  }
}

/** Yields parsed messages from the body; aborts the connection if it falls silent. */
async function* read(
  res: Response,
  parser: SseParser,
  connection: AbortController,
  idleTimeoutMs: number,
): AsyncGenerator<ReturnType<SseParser['push']>[number]> {
  if (!res.body) return;
  let idle = setTimeout(() => connection.abort(), idleTimeoutMs);
  try {
    const decoder = new TextDecoder();
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      clearTimeout(idle);
      idle = setTimeout(() => connection.abort(), idleTimeoutMs);
      yield* parser.push(decoder.decode(chunk, { stream: true }));
    }
  } finally {
    clearTimeout(idle);
  }
}

function parseHandle(data: string, status: number): TaskHandle {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    throw invalidResponse(status, 'an event carried data that is not JSON');
  }
  const parsed = taskHandleSchema.safeParse(json);
  if (!parsed.success) throw invalidResponse(status, parsed.error.message);
  return parsed.data;
}
