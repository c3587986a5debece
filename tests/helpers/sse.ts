export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Reads a `text/event-stream` response into events until the server closes it, `stopAfter`
 * events arrived, or `signal` aborts. Comments (heartbeats) are counted, not returned.
 */
export async function readSse(
  url: string,
  opts: { key: string; headers?: Record<string, string>; stopAfter?: number; timeoutMs?: number },
): Promise<{
  status: number;
  contentType: string | null;
  events: SseEvent[];
  retry?: number;
  closedByServer: boolean;
}> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), opts.timeoutMs ?? 20_000);
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${opts.key}`, ...opts.headers },
    signal: controller.signal,
  });
  const events: SseEvent[] = [];
  let retry: number | undefined;
  let closedByServer = false;
  if (res.status !== 200 || !res.body) {
    clearTimeout(timer);
    await res.text();
    return {
      status: res.status,
      contentType: res.headers.get('content-type'),
      events,
      closedByServer,
    };
  }
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of res.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let at: number;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const event: SseEvent = { data: '' };
        let hasData = false;
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const [field, ...rest] = line.split(':');
          const value = rest.join(':').replace(/^ /, '');
          if (field === 'retry') retry = Number(value);
          if (field === 'id') event.id = value;
          if (field === 'event') event.event = value;
          if (field === 'data') {
            event.data += value;
            hasData = true;
          }
        }
        if (hasData) events.push(event);
        if (opts.stopAfter && events.length >= opts.stopAfter) {
          controller.abort();
          return {
            status: 200,
            contentType: res.headers.get('content-type'),
            events,
            retry,
            closedByServer,
          };
        }
      }
    }
    closedByServer = true;
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
  }
  return {
    status: 200,
    contentType: res.headers.get('content-type'),
    events,
    retry,
    closedByServer,
  };
}
