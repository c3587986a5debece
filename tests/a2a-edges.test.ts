/**
 * The A2A door at the edges the official TCK (a2aproject/a2a-tck) reads, over both bindings with
 * raw requests (so the exact codes are seen, not the SDK client's reading of them): messages of
 * text only (a job type that declares `textInput`, LONGRUN_A2A_DEFAULT_SKILL), messages the door
 * cannot take (ContentTypeNotSupportedError, -32005, and no task), invalid messages and JSON-RPC
 * envelopes, ListTasks' filters, artifacts and history, and the card's security description.
 * Two API processes on one prefix with the stock worker: `plain` has no default skill, `chat`
 * names `echo` (which takes text as `{text}`).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startApiProcess, type ApiProcess, type Proc } from './helpers/processes.js';
import { API_KEYS, KEY_A, startWorker, uniquePrefix } from './helpers/service.js';

const cleanups = new Set<() => unknown>();
let plain: ApiProcess;
let chat: ApiProcess;
let worker: Proc;
let prefix: string;

beforeAll(async () => {
  prefix = uniquePrefix();
  worker = await startWorker(prefix);
  cleanups.add(() => worker.stop());
  const env = { REDIS_URL: inject('redisUrl'), LONGRUN_PREFIX: prefix, LONGRUN_API_KEYS: API_KEYS };
  [plain, chat] = await Promise.all([
    startApiProcess(cleanups, env),
    startApiProcess(cleanups, { ...env, LONGRUN_A2A_DEFAULT_SKILL: 'echo' }),
  ]);
  // The worker has registered its types (echo among them) on both replicas.
  for (const api of [plain, chat]) {
    for (let i = 0; ; i++) {
      const card = (await (await fetch(`${api.url}/.well-known/agent-card.json`)).json()) as {
        skills: { id: string }[];
      };
      if (card.skills.some((s) => s.id === 'echo')) break;
      if (i > 100) throw new Error('echo was not registered');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}, 60_000);

afterAll(async () => {
  for (const fn of [...cleanups].reverse()) await fn();
});

const headers = {
  Authorization: `Bearer ${KEY_A}`,
  'Content-Type': 'application/json',
  'A2A-Version': '1.0',
};

type Json = Record<string, unknown>;

/** A JSON-RPC call; the body as sent when `raw`, else `{jsonrpc, id, method, params}`. */
async function rpc(api: ApiProcess, method: string, params: unknown, raw?: unknown) {
  const res = await fetch(`${api.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers,
    body: JSON.stringify(raw ?? { jsonrpc: '2.0', id: randomUUID(), method, params }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { result?: Json; error?: { code: number; message: string } };
}

/** A REST call: its status and body. */
async function rest(api: ApiProcess, verb: string, path: string, body?: unknown) {
  const res = await fetch(`${api.url}/a2a/rest${path}`, {
    method: verb,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

/** The A2A error reason in a REST error body. */
const reasonOf = (body: Json) =>
  ((body.error as { details?: { reason?: string }[] } | undefined)?.details ?? [])[0]?.reason;

const textMessage = (text: string, extra: Json = {}) => ({
  message: {
    messageId: randomUUID(),
    role: 'ROLE_USER',
    parts: [{ text }],
    ...extra,
  },
});

const dataMessage = (data: unknown) => ({
  message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ data }] },
});

describe('messages of text only', () => {
  it('start the default skill with the text in its declared field, over both bindings', async () => {
    const viaRpc = await rpc(chat, 'SendMessage', textMessage('hello over JSON-RPC'));
    const task = viaRpc.result?.task as Json & { id: string; status: { state: string } };
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(JSON.stringify(task.artifacts)).toContain('"text":"hello over JSON-RPC"');
    // It is a task that exists: GetTask and the HTTP API see it.
    const got = await rpc(chat, 'GetTask', { id: task.id });
    expect((got.result as { id: string }).id).toBe(task.id);

    const viaRest = await rest(chat, 'POST', '/message:send', textMessage('hello over REST'));
    expect(viaRest.status).toBe(200);
    const restTask = viaRest.body.task as { id: string; status: { state: string } };
    expect(restTask.status.state).toBe('TASK_STATE_COMPLETED');
    const jobs = await fetch(`${chat.url}/v1/jobs/${restTask.id}`, { headers });
    expect(((await jobs.json()) as { type: string }).type).toBe('echo');
  });

  it('may name their skill in metadata.skill, where no default is set', async () => {
    const named = await rpc(
      plain,
      'SendMessage',
      textMessage('named', { metadata: { skill: 'echo' } }),
    );
    expect((named.result?.task as { status: { state: string } }).status.state).toBe(
      'TASK_STATE_COMPLETED',
    );
  });

  it('naming no skill that takes text: ContentTypeNotSupportedError (-32005), and no task', async () => {
    const before = await rpc(plain, 'ListTasks', { pageSize: 100 });
    const none = await rpc(plain, 'SendMessage', textMessage('no default here'));
    expect(none.error?.code).toBe(-32005);
    expect(none.result).toBeUndefined();
    // sleep takes no text; nope is not served.
    for (const skill of ['sleep', 'nope']) {
      const refused = await rpc(chat, 'SendMessage', textMessage('x', { metadata: { skill } }));
      expect(refused.error?.code, skill).toBe(-32005);
    }
    const viaRest = await rest(plain, 'POST', '/message:send', textMessage('no default here'));
    expect(viaRest.status).toBeGreaterThanOrEqual(400);
    expect(viaRest.status).toBeLessThan(500);
    expect(reasonOf(viaRest.body)).toBe('CONTENT_TYPE_NOT_SUPPORTED');
    // A file part the door cannot read either.
    const file = {
      message: {
        messageId: randomUUID(),
        role: 'ROLE_USER',
        parts: [{ url: 'https://example.com/a.pdf', mediaType: 'application/pdf' }],
      },
    };
    expect((await rpc(chat, 'SendMessage', file)).error?.code).toBe(-32005);
    // No task was made by any of them.
    const after = await rpc(plain, 'ListTasks', { pageSize: 100 });
    const ids = (r: typeof after) => (r.result?.tasks as { id: string }[]).map((t) => t.id);
    expect(ids(after).filter((id) => !ids(before).includes(id))).toHaveLength(0);
  });

  it('to a finished task: UnsupportedOperationError, not a content error', async () => {
    const done = await rpc(chat, 'SendMessage', textMessage('first'));
    const id = (done.result?.task as { id: string }).id;
    const again = await rpc(chat, 'SendMessage', textMessage('again', { taskId: id }));
    expect(again.error?.code).toBe(-32004);
  });
});

describe('invalid requests', () => {
  it('a message with no parts or no role is invalid params on both bindings', async () => {
    const noParts = { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [] } };
    const noRole = { message: { messageId: randomUUID(), parts: [{ text: 'hi' }] } };
    for (const params of [noParts, noRole]) {
      expect((await rpc(chat, 'SendMessage', params)).error?.code).toBe(-32602);
      const viaRest = await rest(chat, 'POST', '/message:send', params);
      expect(viaRest.status).toBe(400);
      expect(reasonOf(viaRest.body)).toBe('INVALID_PARAMS');
    }
  });

  it('an envelope that is not JSON-RPC 2.0, or has no method, is -32600', async () => {
    const version = await rpc(plain, '', undefined, {
      jsonrpc: '1.0',
      id: 1,
      method: 'GetTask',
      params: { id: 'x' },
    });
    expect(version.error?.code).toBe(-32600);
    const noMethod = await rpc(plain, '', undefined, { jsonrpc: '2.0', id: 2, params: {} });
    expect(noMethod.error?.code).toBe(-32600);
  });
});

describe('starts the engine refuses', () => {
  it('are errors naming why, on both bindings, never a task that is then unknown', async () => {
    const before = await rpc(plain, 'ListTasks', { pageSize: 100 });
    // Input that fails the job type's schema: invalid params naming the field.
    const invalid = dataMessage({ type: 'sleep', input: { ms: 'soon' } });
    const viaRpc = await rpc(plain, 'SendMessage', invalid);
    expect(viaRpc.result).toBeUndefined();
    expect(viaRpc.error?.code).toBe(-32602);
    expect(viaRpc.error?.message).toMatch(/does not match job type "sleep".*ms/);
    const viaRest = await rest(chat, 'POST', '/message:send', invalid);
    expect(viaRest.status).toBe(400);
    expect(reasonOf(viaRest.body)).toBe('INVALID_PARAMS');
    expect(JSON.stringify(viaRest.body)).toMatch(/ms/);
    // A type that is not served: invalid params too.
    const unknown = await rpc(plain, 'SendMessage', dataMessage({ type: 'nope', input: {} }));
    expect(unknown.error?.code).toBe(-32602);
    expect(unknown.error?.message).toMatch(/Unknown job type "nope"/);
    // Streamed: the same error, not a task event.
    const streamed = await rpc(plain, 'SendStreamingMessage', invalid);
    expect(streamed.error?.code).toBe(-32602);
    const after = await rpc(plain, 'ListTasks', { pageSize: 100 });
    const ids = (r: typeof after) => (r.result?.tasks as { id: string }[]).map((t) => t.id);
    expect(ids(after).filter((id) => !ids(before).includes(id))).toHaveLength(0);
  });

  it('the open-task cap is an error saying to retry later, on both bindings', async () => {
    const capped = await startApiProcess(cleanups, {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
      LONGRUN_MAX_OPEN_TASKS: '1',
    });
    const open = await rpc(plain, 'SendMessage', {
      ...dataMessage({ type: 'sleep', input: { ms: 60_000 } }),
      configuration: { returnImmediately: true },
    });
    const openId = (open.result?.task as { id: string }).id;
    const message = dataMessage({ type: 'echo', input: {} });
    const viaRpc = await rpc(capped, 'SendMessage', message);
    expect(viaRpc.result).toBeUndefined();
    expect(viaRpc.error?.code).toBe(-32000);
    expect(viaRpc.error?.message).toMatch(/unfinished tasks.*retry/i);
    const viaRest = await rest(capped, 'POST', '/message:send', message);
    expect(viaRest.status).toBe(429);
    expect(JSON.stringify(viaRest.body)).toMatch(/RESOURCE_EXHAUSTED/);
    await rpc(plain, 'CancelTask', { id: openId });
  });
});

describe('ListTasks', () => {
  it('refuses an unknown status, a negative historyLength and a time that is not RFC 3339', async () => {
    const bad = [
      { status: 'TASK_STATE_BOGUS' },
      { historyLength: -1 },
      { statusTimestampAfter: '-1' },
      { statusTimestampAfter: '2026-01-02' },
    ];
    for (const params of bad) {
      const viaRpc = await rpc(plain, 'ListTasks', params);
      expect(viaRpc.error?.code, JSON.stringify(params)).toBe(-32602);
      const query = new URLSearchParams(
        Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]),
      ).toString();
      const viaRest = await rest(plain, 'GET', `/tasks?${query}`);
      expect(viaRest.status, query).toBe(400);
    }
    const ok = await rpc(plain, 'ListTasks', { statusTimestampAfter: '2020-01-02T03:04:05Z' });
    expect(ok.error).toBeUndefined();
  });

  it('lists no artifacts unless includeArtifacts, and honours historyLength', async () => {
    const sent = await rpc(plain, 'SendMessage', dataMessage({ type: 'echo', input: { n: 7 } }));
    const id = (sent.result?.task as { id: string }).id;
    const find = (r: { result?: Json }) =>
      (
        r.result?.tasks as (
          { id: string; artifacts?: unknown[]; history?: unknown[] } | undefined
        )[]
      ).find((t) => t?.id === id);
    const without = find(await rpc(plain, 'ListTasks', { pageSize: 100 }));
    expect(without?.artifacts ?? []).toEqual([]);
    const withThem = find(await rpc(plain, 'ListTasks', { pageSize: 100, includeArtifacts: true }));
    expect(JSON.stringify(withThem?.artifacts)).toContain('"n":7');
    const restWithout = await rest(plain, 'GET', '/tasks?pageSize=100');
    const listed = (restWithout.body.tasks as { id: string; artifacts?: unknown[] }[]).find(
      (t) => t.id === id,
    );
    expect(listed?.artifacts ?? []).toEqual([]);
    const noHistory = find(await rpc(plain, 'ListTasks', { pageSize: 100, historyLength: 0 }));
    expect(noHistory?.history ?? []).toEqual([]);
  });
});

describe('GetTask', () => {
  it('honours historyLength with the task’s messages, and refuses a negative one', async () => {
    const sent = await rpc(chat, 'SendMessage', textMessage('history please'));
    const id = (sent.result?.task as { id: string }).id;
    const one = await rpc(chat, 'GetTask', { id, historyLength: 1 });
    const history = (one.result as { history?: { role: string }[] }).history ?? [];
    expect(history).toHaveLength(1);
    expect(history[0]?.role).toBe('ROLE_AGENT');
    const none = await rpc(chat, 'GetTask', { id, historyLength: 0 });
    expect((none.result as { history?: unknown[] }).history ?? []).toEqual([]);
    const viaRest = await rest(chat, 'GET', `/tasks/${id}?historyLength=1`);
    expect((viaRest.body.history as unknown[] | undefined) ?? []).toHaveLength(1);
    expect((await rpc(chat, 'GetTask', { id, historyLength: -1 })).error?.code).toBe(-32602);
  });
});

describe('contextId', () => {
  it('a client’s contextId is kept with the task, shown by every call and filtered on', async () => {
    const context = `ctx-${randomUUID()}`;
    const sent = await rpc(
      chat,
      'SendMessage',
      textMessage('in a context', { contextId: context }),
    );
    const task = sent.result?.task as { id: string; contextId: string };
    expect(task.contextId).toBe(context);
    expect((await rpc(plain, 'GetTask', { id: task.id })).result?.contextId).toBe(context);
    expect((await rest(plain, 'GET', `/tasks/${task.id}`)).body.contextId).toBe(context);
    const listed = await rpc(plain, 'ListTasks', { contextId: context });
    expect((listed.result?.tasks as { id: string }[]).map((t) => t.id)).toEqual([task.id]);
    // Without one, the context is the task's own id.
    const bare = await rpc(chat, 'SendMessage', textMessage('no context'));
    const own = bare.result?.task as { id: string; contextId: string };
    expect(own.contextId).toBe(own.id);
  });

  it('a message whose contextId is not its task’s is refused, on both bindings', async () => {
    const context = `ctx-${randomUUID()}`;
    const start = {
      message: {
        messageId: randomUUID(),
        role: 'ROLE_USER',
        contextId: context,
        parts: [{ data: { type: 'approval', input: { question: 'Go?' } } }],
      },
    };
    const asked = await rpc(plain, 'SendMessage', start);
    const task = asked.result?.task as { id: string; status: { state: string } };
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const answer = (contextId: string) => ({
      message: {
        messageId: randomUUID(),
        role: 'ROLE_USER',
        taskId: task.id,
        contextId,
        parts: [{ data: { input: { approved: true } } }],
      },
    });
    expect((await rpc(plain, 'SendMessage', answer('ctx-other'))).error?.code).toBe(-32602);
    const viaRest = await rest(chat, 'POST', '/message:send', answer('ctx-other'));
    expect(viaRest.status).toBe(400);
    expect(reasonOf(viaRest.body)).toBe('INVALID_PARAMS');
    // Still waiting: the refused answers did nothing. The right context is taken.
    const done = await rpc(chat, 'SendMessage', answer(context));
    const after = done.result?.task as { contextId: string; status: { state: string } };
    expect(after.status.state).toBe('TASK_STATE_COMPLETED');
    expect(after.contextId).toBe(context);
  });
});

describe('the Agent Card', () => {
  it('names no server setting in its security description', async () => {
    const card = await (await fetch(`${plain.url}/.well-known/agent-card.json`)).text();
    expect(card).toContain('securitySchemes');
    expect(card).not.toMatch(/LONGRUN_/);
  });
});
