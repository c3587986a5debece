// The API calls the console makes, with the tenant's key from sessionStorage in the
// Authorization header (never a URL or a cookie). Problems (RFC 9457) become ApiError.
import { TERMINAL } from './dom.js';

const KEY = 'longrun.console.key';

export const session = {
  get key() {
    return sessionStorage.getItem(KEY);
  },
  set(key) {
    sessionStorage.setItem(KEY, key);
  },
  clear() {
    sessionStorage.removeItem(KEY);
  },
};

/** A problem answer: its status, title, detail and field errors. */
export class ApiError extends Error {
  constructor(status, problem) {
    const body = problem && typeof problem === 'object' ? problem : {};
    super(body.detail || body.title || `HTTP ${status}`);
    this.status = status;
    this.problem = body;
    this.errors = Array.isArray(body.errors) ? body.errors : [];
  }
}

function headers(extra = {}) {
  return { Authorization: `Bearer ${session.key ?? ''}`, ...extra };
}

/**
 * One request; the parsed JSON answer (null for 204). 4xx/5xx throw ApiError, 207 is an answer.
 * @example await api('POST', `/v1/jobs/${id}/cancel`)
 */
export async function api(method, path, body) {
  const init = {
    method,
    headers: headers({ Accept: 'application/json' }),
    cache: 'no-store',
    credentials: 'omit',
  };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (res.status === 204) return null;
  const type = res.headers.get('content-type') ?? '';
  const data = type.includes('json') ? await res.json() : await res.text();
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

const pause = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * Follows a task's event stream (`GET /v1/jobs/{id}/events`, Server-Sent Events) with `fetch`,
 * which, unlike EventSource, sends the key in a header. Calls `onEvent(handle, id)` for each
 * event, from event `from` on ('0': the whole history), resumes with Last-Event-ID after a drop,
 * and ends after a terminal status or when `signal` aborts.
 */
export async function follow(id, onEvent, signal, from) {
  let last = from;
  while (!signal.aborted) {
    try {
      const extra = { Accept: 'text/event-stream' };
      if (last !== undefined) extra['Last-Event-ID'] = last;
      const res = await fetch(`/v1/jobs/${encodeURIComponent(id)}/events`, {
        headers: headers(extra),
        signal,
        cache: 'no-store',
        credentials: 'omit',
      });
      if (!res.ok) throw new ApiError(res.status, await res.json().catch(() => null));
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value.replaceAll('\r\n', '\n');
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = parseEvent(block);
          if (!event) continue;
          if (event.id !== undefined) last = event.id;
          onEvent(event.data, event.id);
          if (TERMINAL.has(event.data.status)) return;
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      // A refusal (the task is gone, the key revoked) will not pass by retrying.
      if (error instanceof ApiError && error.status < 500 && error.status !== 429) throw error;
    }
    await pause(2000, signal);
  }
}

/**
 * Polls a task's handle (`GET /v1/jobs/{id}`) at the interval its last handle asks
 * (`pollIntervalMs`), calling `onHandle(handle)` with each, until it is finished or `signal`
 * aborts: for tasks beyond the streams a page keeps open. A refusal ends it, as `follow`'s does.
 */
export async function poll(task, onHandle, signal) {
  let handle = task;
  while (!signal.aborted && !TERMINAL.has(handle.status)) {
    await pause(Math.max(500, handle.pollIntervalMs ?? 2000), signal);
    if (signal.aborted) return;
    try {
      handle = await api('GET', `/v1/jobs/${encodeURIComponent(task.taskId)}`);
      onHandle(handle);
    } catch (error) {
      if (error instanceof ApiError && error.status < 500 && error.status !== 429) throw error;
    }
  }
}

function parseEvent(block) {
  let id;
  const data = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('id:')) id = line.slice(3).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  if (data.length === 0) return null;
  return { id, data: JSON.parse(data.join('\n')) };
}
