/**
 * A small `ConnectedMcpSessionPort` of our own for `@modelcontextprotocol/ext-tasks`' requester
 * session (`withTasks`): its `createTaskSessionFromClient` adapts the separate v2 MCP SDK
 * (`@modelcontextprotocol/client`), which is not installed, so the package's client entry point
 * cannot load; its session and the `core/v2` schemas load from their own files.
 *
 * The port speaks the stateless 2026-07-28 framing over `fetch`: every request carries the
 * protocol version, client info and capabilities in `_meta` (the tasks extension declared when
 * asked), and the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers. Every message it
 * sends and receives is checked against the official `core/v2` schemas; what fails is recorded
 * in `violations` (tests assert there are none).
 */
import {
  CallToolResultV2Schema,
  CancelTaskRequestV2Schema,
  CancelTaskResultV2Schema,
  CreateTaskResultV2Schema,
  ErrorV2Schema,
  GetTaskRequestV2Schema,
  GetTaskResultV2Schema,
  TaskStatusNotificationV2Schema,
  TaskSubscriptionAcknowledgedNotificationsV2Schema,
  TaskSubscriptionNotificationsV2Schema,
  UpdateTaskRequestV2Schema,
  UpdateTaskResultV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import type { JsonValue } from '@modelcontextprotocol/ext-tasks/core';
// The package's exports map allows only its entry points; these files are what `./client`
// re-exports, without the adapter that needs the v2 SDK.
import { withTasks } from '../../node_modules/@modelcontextprotocol/ext-tasks/dist/client/session.js';
import type {
  ConnectedMcpSessionPort,
  DispatchOptions,
  IncomingServerRequest,
  JsonRpcResponse,
} from '../../node_modules/@modelcontextprotocol/ext-tasks/dist/client/port.js';

export { withTasks };

export const V2_VERSION = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** One exchange as the port saw it. */
export interface Exchange {
  url: string;
  method: string;
  request: Record<string, unknown>;
  status: number;
  response: Record<string, unknown>;
}

export interface V2PortOptions {
  /** The replicas' `/mcp` URLs, used round-robin (a load balancer without affinity). */
  urls: string[];
  apiKey: string;
  /** Declare `io.modelcontextprotocol/tasks` in each request's capabilities (default true). */
  tasks?: boolean;
}

/** A schema with zod's `safeParse` (the `core/v2` ones). */
interface Checker {
  safeParse(value: unknown): { success: boolean; error?: unknown };
}

/** What each sent request must match (the full JSON-RPC envelope), by method. */
const REQUEST_SCHEMAS: Record<string, Checker> = {
  'tasks/get': GetTaskRequestV2Schema,
  'tasks/update': UpdateTaskRequestV2Schema,
  'tasks/cancel': CancelTaskRequestV2Schema,
};

/** What each result must match, by method (`tools/call` by its `resultType`). */
function resultSchema(method: string, result: Record<string, unknown>): Checker | undefined {
  if (method === 'tools/call') {
    return result.resultType === 'task' ? CreateTaskResultV2Schema : CallToolResultV2Schema;
  }
  return {
    'tasks/get': GetTaskResultV2Schema,
    'tasks/update': UpdateTaskResultV2Schema,
    'tasks/cancel': CancelTaskResultV2Schema,
  }[method];
}

/** A `subscriptions/listen` request as the port reads its answer. */
export interface Listening {
  status: number;
  /** The listen request's JSON-RPC id (the subscription id). */
  id: number;
  /** The JSON-RPC error when it was refused (a JSON answer, no stream). */
  error?: { code: number; message: string; data?: unknown };
  /** The next message of the stream (a notification or the closing response); null at its end. */
  next(): Promise<Record<string, unknown> | null>;
  /** Every message left, until the server ends the stream. */
  rest(): Promise<Record<string, unknown>[]>;
  close(): void;
}

export class V2Port implements ConnectedMcpSessionPort {
  readonly endpointId: string;
  readonly taskCapabilities = { generation: 'v2', capabilities: {} } as const;
  readonly invalidated = false;
  readonly exchanges: Exchange[] = [];
  readonly violations: string[] = [];
  private next = 0;
  private id = 0;

  constructor(private readonly opts: V2PortOptions) {
    this.endpointId = `longrun-test:${opts.urls.join(',')}`;
  }

  /** Sends one request (`{method, params}`), framed; answers its result or error. */
  async dispatch(request: JsonValue, options: DispatchOptions = {}): Promise<JsonRpcResponse> {
    const { method, params = {} } = request as { method: string; params?: Record<string, unknown> };
    const { body } = await this.send(method, params, {
      headers: options.context?.headers,
      signal: options.signal,
    });
    if ('error' in body) return { kind: 'error', error: body.error as never };
    return { kind: 'result', result: body.result as JsonValue };
  }

  /**
   * Sends a request and returns the HTTP status and JSON-RPC body as they came (for error tests).
   * `framing` overrides headers or `_meta` entries to send wrong ones on purpose.
   */
  async send(
    method: string,
    params: Record<string, unknown>,
    framing: {
      headers?: Readonly<Record<string, string>> | undefined;
      meta?: Record<string, unknown>;
      signal?: AbortSignal | undefined;
    } = {},
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const url = this.opts.urls[this.next++ % this.opts.urls.length] as string;
    const callerMeta = (params._meta ?? {}) as Record<string, unknown>;
    const tasks = this.opts.tasks ?? true;
    const message = {
      jsonrpc: '2.0',
      id: ++this.id,
      method,
      params: {
        ...params,
        _meta: {
          ...callerMeta,
          'io.modelcontextprotocol/protocolVersion': V2_VERSION,
          'io.modelcontextprotocol/clientInfo': { name: 'longrun-tests', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': tasks
            ? { extensions: { [TASKS_EXTENSION]: {} } }
            : {},
          ...framing.meta,
        },
      },
    };
    const requestCheck = REQUEST_SCHEMAS[method];
    if (requestCheck) this.check(`${method} request`, requestCheck, message);
    const name = method.startsWith('tasks/')
      ? params.taskId
      : method === 'tools/call'
        ? params.name
        : undefined;
    const headers = new Headers({
      authorization: `Bearer ${this.opts.apiKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V2_VERSION,
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    });
    // The session's own headers (it sets `Mcp-Name` for tasks/*) and the test's win, by name.
    for (const [header, value] of Object.entries(framing.headers ?? {})) headers.set(header, value);
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(message),
      signal: framing.signal ?? null,
    });
    const body = (await res.json()) as Record<string, unknown>;
    this.exchanges.push({ url, method, request: message, status: res.status, response: body });
    if ('error' in body) {
      this.check(`${method} error`, ErrorV2Schema, body.error);
    } else {
      const result = body.result as Record<string, unknown>;
      const schema = resultSchema(method, result);
      if (schema) this.check(`${method} result`, schema, result);
    }
    return { status: res.status, body };
  }

  /**
   * Opens `subscriptions/listen` with `notifications` as its filter, framed like `send`. Each
   * message of the stream is checked: the acknowledgement's filter against the extension's
   * `TaskSubscriptionAcknowledgedNotificationsV2Schema`, every `notifications/tasks` against
   * `TaskStatusNotificationV2Schema`; a well-formed filter against
   * `TaskSubscriptionNotificationsV2Schema` before it is sent.
   */
  async listen(notifications: unknown): Promise<Listening> {
    const url = this.opts.urls[this.next++ % this.opts.urls.length] as string;
    const id = ++this.id;
    const tasks = this.opts.tasks ?? true;
    const message = {
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: {
        notifications,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': V2_VERSION,
          'io.modelcontextprotocol/clientInfo': { name: 'longrun-tests', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': tasks
            ? { extensions: { [TASKS_EXTENSION]: {} } }
            : {},
        },
      },
    };
    const filter = TaskSubscriptionNotificationsV2Schema.safeParse(notifications);
    const abort = new AbortController();
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.opts.apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V2_VERSION,
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify(message),
      signal: abort.signal,
    });
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const body = (await res.json()) as Record<string, unknown>;
      if ('error' in body) this.check('subscriptions/listen error', ErrorV2Schema, body.error);
      const error = body.error as Listening['error'];
      const none = async () => null;
      return { status: res.status, id, error, next: none, rest: async () => [], close: () => {} };
    }
    if (!filter.success) this.violations.push(`a stream for a malformed filter ${url}`);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const next = async (): Promise<Record<string, unknown> | null> => {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event
            .split('\n')
            .filter((line) => line.startsWith('data: '))
            .map((line) => line.slice('data: '.length))
            .join('\n');
          if (data === '') continue; // a comment (heartbeat)
          const parsed = JSON.parse(data) as Record<string, unknown>;
          this.checkStreamed(parsed);
          return parsed;
        }
        const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (chunk.done) return null;
        buffer += decoder.decode(chunk.value, { stream: true });
      }
    };
    const rest = async () => {
      const all: Record<string, unknown>[] = [];
      for (let m = await next(); m !== null; m = await next()) all.push(m);
      return all;
    };
    return { status: res.status, id, next, rest, close: () => abort.abort() };
  }

  private checkStreamed(message: Record<string, unknown>): void {
    const params = message.params as Record<string, unknown> | undefined;
    if (message.method === 'notifications/tasks') {
      this.check('notifications/tasks', TaskStatusNotificationV2Schema, message);
    } else if (message.method === 'notifications/subscriptions/acknowledged') {
      this.check(
        'notifications/subscriptions/acknowledged',
        TaskSubscriptionAcknowledgedNotificationsV2Schema,
        params?.notifications,
      );
    }
  }

  onServerRequest(
    _handler: (incoming: IncomingServerRequest) => Promise<JsonRpcResponse | undefined>,
  ) {
    return () => undefined; // a V2 server sends no requests: input travels in tasks/get
  }

  onNotification(_listener: (notification: JsonValue) => void) {
    return () => undefined;
  }

  onInvalidated(_listener: (reason: unknown) => void) {
    return () => undefined;
  }

  private check(what: string, schema: Checker, value: unknown): void {
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      this.violations.push(`${what}: ${String(parsed.error)}\n${JSON.stringify(value)}`);
    }
  }
}
