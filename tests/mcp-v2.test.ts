/**
 * The MCP door, Tasks V2 (`io.modelcontextprotocol/tasks` at MCP 2026-07-28, stateless
 * framing), driven by `@modelcontextprotocol/ext-tasks`' requester session (`withTasks`) over a
 * small port of ours (tests/helpers/mcp-v2-port.ts) that sends each request to the next of two
 * API processes (round-robin, no affinity) and checks every message it sends and receives
 * against the official `core/v2` schemas. The stock worker process runs the jobs; every task is
 * also read at `GET /v1/jobs/<id>`.
 */
import { randomUUID } from 'node:crypto';
import {
  CallToolResultV2Schema,
  GetTaskResultV2Schema,
  TASKS_EXTENSION_ID_V2,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpClient, waitFor } from './helpers/http.js';
import { readmeMcpSnippets, runSnippet, startMcpStack, type McpStack } from './helpers/mcp.js';
import { V2Port, withTasks } from './helpers/mcp-v2-port.js';
import { KEY_A, KEY_B } from './helpers/service.js';

const cleanups = new Set<() => unknown>();
let stack: McpStack;
const ports: V2Port[] = [];

/** A port for `key` over both replicas (declaring the tasks extension unless told not to). */
function port(key = KEY_A, tasks = true): V2Port {
  const made = new V2Port({ urls: stack.apis.map((a) => `${a.url}/mcp`), apiKey: key, tasks });
  ports.push(made);
  return made;
}

const http = (replica = 0) => httpClient(stack.apis[replica]!.url, KEY_A);

/** A result's JSON-RPC error, or fails. */
function errorOf(body: Record<string, unknown>): { code: number; message: string; data?: unknown } {
  expect(body).toHaveProperty('error');
  return body.error as { code: number; message: string; data?: unknown };
}

/** The V2 task as `tasks/get` answers it. */
async function getTask(p: V2Port, taskId: string): Promise<Record<string, unknown>> {
  const { body } = await p.send('tasks/get', { taskId });
  return body.result as Record<string, unknown>;
}

beforeAll(async () => {
  stack = await startMcpStack(cleanups);
}, 60_000);

afterEach(() => {
  // Every message of the test, both ways, matched the pinned schemas.
  for (const p of ports) expect(p.violations).toEqual([]);
});

afterAll(async () => {
  for (const fn of [...cleanups].reverse()) await Promise.resolve(fn()).catch(() => undefined);
});

describe('discovery and tools', () => {
  it('server/discover advertises the tasks extension; no initialize, no session', async () => {
    const p = port();
    const { status, body } = await p.send('server/discover', {});
    expect(status).toBe(200);
    expect(body.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: expect.arrayContaining(['2026-07-28', '2025-11-25']),
      capabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } },
    });
    const tools = (await p.send('tools/list', {})).body.result as { tools: { name: string }[] };
    expect(tools.tools.map((t) => t.name)).toEqual([
      'approval',
      'durable',
      'echo',
      'fail',
      'flaky',
      'sleep',
      // The follow tools, for clients without the extension (issue 32).
      'longrun_get_task',
      'longrun_answer_task',
      'longrun_cancel_task',
      'longrun_list_tasks',
    ]);
    const get = await fetch(`${stack.apis[0]!.url}/mcp`, {
      headers: { authorization: `Bearer ${KEY_A}`, 'mcp-protocol-version': '2026-07-28' },
    });
    expect(get.status).toBe(405);
  });

  it('answers 401 without a bearer key', async () => {
    const res = await fetch(`${stack.apis[1]!.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28' },
      body: '{}',
    });
    expect(res.status).toBe(401);
  });
});

describe('tasks through the requester session', () => {
  it('a tool call becomes a task and completes; the same task over HTTP', async () => {
    const p = port();
    const session = withTasks(p);
    const execution = await session.callTool('sleep', { ms: 300 });
    expect(execution.kind).toBe('task');
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe('completed');
    const result = (outcome as { result: unknown }).result;
    expect(CallToolResultV2Schema.safeParse(result).success).toBe(true);
    expect(result).toMatchObject({ resultType: 'complete', structuredContent: { sleptMs: 300 } });

    const taskId = execution.kind === 'task' ? execution.handle.taskId : '';
    const created = p.exchanges.find((e) => e.method === 'tools/call')!.response.result;
    expect(created).toMatchObject({
      resultType: 'task',
      taskId,
      status: 'working',
      ttlMs: 600_000,
      pollIntervalMs: 200,
    });
    expect(Object.keys(created as object).sort()).toEqual(
      [
        '_meta',
        'createdAt',
        'lastUpdatedAt',
        'pollIntervalMs',
        'resultType',
        'status',
        'statusMessage',
        'taskId',
        'ttlMs',
      ].sort(),
    );
    expect(new Set(p.exchanges.map((e) => e.url)).size).toBe(2); // both replicas served it
    expect((await http(1)('GET', `/v1/jobs/${taskId}`)).body).toMatchObject({
      taskId,
      status: 'completed',
      result: { sleptMs: 300 },
    });
    await session.close();
  });

  it('answers tools/call only once tasks/get resolves it, on any replica', async () => {
    const p = port();
    for (let i = 0; i < 6; i++) {
      const created = (await p.send('tools/call', { name: 'echo', arguments: { i } })).body;
      const taskId = (created.result as { taskId: string }).taskId;
      const got = await p.send('tasks/get', { taskId }); // the next request: the other replica
      expect(got.body.result).toMatchObject({ resultType: 'complete', taskId });
    }
  });

  it('the approval: inputRequests in tasks/get, answered with tasks/update', async () => {
    const p = port();
    const asked: unknown[] = [];
    const session = withTasks(p, {
      onInputRequest: async (request) => {
        asked.push(request);
        return { action: 'accept', content: { approved: true, comment: 'ok' } } as never;
      },
    });
    const execution = await session.callTool('approval', { question: 'Release v2?' });
    const { outcome } = await execution.settle();
    expect(outcome).toMatchObject({
      status: 'completed',
      result: { resultType: 'complete', structuredContent: { approved: true, comment: 'ok' } },
    });
    expect(asked).toEqual([
      {
        kind: 'elicitation',
        params: expect.objectContaining({
          mode: 'form',
          message: 'Release v2?',
          requestedSchema: expect.objectContaining({ required: ['approved'] }),
        }),
      },
    ]);
    const waiting = p.exchanges.find(
      (e) =>
        e.method === 'tasks/get' &&
        (e.response.result as { status: string }).status === 'input_required',
    )!;
    expect(GetTaskResultV2Schema.safeParse(waiting.response.result).success).toBe(true);
    expect(p.exchanges.filter((e) => e.method === 'tasks/update')).toHaveLength(1);
    const taskId = execution.kind === 'task' ? execution.handle.taskId : '';
    expect((await http()('GET', `/v1/jobs/${taskId}`)).body).toMatchObject({
      status: 'completed',
      result: { approved: true, comment: 'ok' },
    });
    await session.close();
  });

  it('cancels a running task', async () => {
    const p = port();
    const session = withTasks(p);
    const execution = await session.callTool('sleep', { ms: 60_000 });
    const taskId = execution.kind === 'task' ? execution.handle.taskId : '';
    await execution.cancel();
    await waitFor(async () =>
      (await getTask(p, taskId)).status === 'cancelled' ? true : undefined,
    );
    expect(p.exchanges.find((e) => e.method === 'tasks/cancel')!.response.result).toMatchObject({
      resultType: 'complete',
    });
    expect((await http(1)('GET', `/v1/jobs/${taskId}`)).body.status).toBe('cancelled');
    // Cancelling a finished task is acknowledged all the same (cancellation is a request).
    expect((await p.send('tasks/cancel', { taskId })).body.result).toMatchObject({
      resultType: 'complete',
    });
    await session.close();
  });

  it('a failed job is completed with an isError result, its message in statusMessage', async () => {
    const p = port();
    const session = withTasks(p);
    const execution = await session.callTool('fail', { message: 'quota exceeded' });
    const { outcome } = await execution.settle();
    expect(outcome).toMatchObject({
      status: 'completed',
      result: {
        resultType: 'complete',
        isError: true,
        content: [{ type: 'text', text: 'quota exceeded' }],
      },
    });
    const taskId = execution.kind === 'task' ? execution.handle.taskId : '';
    expect(await getTask(p, taskId)).toMatchObject({
      status: 'completed',
      statusMessage: 'quota exceeded',
    });
    expect((await http()('GET', `/v1/jobs/${taskId}`)).body.status).toBe('failed');
    await session.close();
  });
});

describe('errors', () => {
  it('an unknown, or another tenant’s, taskId is -32602 on get, update and cancel', async () => {
    const alpha = port();
    const beta = port(KEY_B);
    const created = (
      await alpha.send('tools/call', { name: 'approval', arguments: { question: 'q?' } })
    ).body.result as { taskId: string };
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const params = (taskId: string) =>
        method === 'tasks/update' ? { taskId, inputResponses: {} } : { taskId };
      const foreign = errorOf((await beta.send(method, params(created.taskId))).body);
      const unknown = errorOf((await beta.send(method, params(randomUUID()))).body);
      expect(foreign).toEqual(unknown);
      expect(foreign.code).toBe(-32602);
    }
    expect((await getTask(alpha, created.taskId)).status).not.toBe('cancelled');
    await alpha.send('tasks/cancel', { taskId: created.taskId });
  });

  it('a refused answer is -32602 and the task keeps waiting; unknown keys are ignored', async () => {
    const p = port();
    const { taskId } = (
      await p.send('tools/call', { name: 'approval', arguments: { question: 'q?' } })
    ).body.result as { taskId: string };
    let task: Record<string, unknown> = {};
    await waitFor(async () => {
      task = await getTask(p, taskId);
      return task.status === 'input_required' || undefined;
    });
    const [key] = Object.keys(task.inputRequests as object);
    const wrong = await p.send('tasks/update', {
      taskId,
      inputResponses: { [key!]: { action: 'accept', content: { approved: 'yes' } } },
    });
    expect(errorOf(wrong.body)).toMatchObject({
      code: -32602,
      data: { errors: [{ path: 'input.approved', message: 'must be boolean' }] },
    });
    const stray = await p.send('tasks/update', {
      taskId,
      inputResponses: { 'input-nope': { action: 'accept', content: { approved: true } } },
    });
    expect(stray.body.result).toMatchObject({ resultType: 'complete' });
    expect((await getTask(p, taskId)).status).toBe('input_required');
    const declined = await p.send('tasks/update', {
      taskId,
      inputResponses: { [key!]: { action: 'decline' } },
    });
    expect(declined.body.result).toMatchObject({ resultType: 'complete' });
    expect((await getTask(p, taskId)).status).toBe('cancelled');
  });

  it('a call of an unknown tool is -32602, with or without the tasks extension, creating nothing', async () => {
    const before = (await http()('GET', '/v1/jobs?limit=100')).body.tasks.length;
    for (const p of [port(), port(KEY_A, false)]) {
      const { body } = await p.send('tools/call', { name: 'no-such-tool', arguments: {} });
      expect(body).not.toHaveProperty('result');
      const error = errorOf(body);
      expect(error.code).toBe(-32602);
      expect(error.message).toMatch(/no-such-tool/);
    }
    expect((await http()('GET', '/v1/jobs?limit=100')).body.tasks.length).toBe(before);
  });

  it('a client without the extension: a short tool answers at once, a long one its handle; tasks/* -32021', async () => {
    const plain = port(KEY_A, false);
    const short = await plain.send('tools/call', { name: 'flaky', arguments: { failTimes: 1 } });
    expect(short.status).toBe(200);
    expect(short.body.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { attempt: 2 },
    });
    const required = {
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } } },
    };
    // A long tool answers at once with the handle as a tool result (issue 32), not -32021.
    const long = await plain.send('tools/call', { name: 'sleep', arguments: { ms: 10 } });
    expect(long.status).toBe(200);
    const handle = long.body.result as { structuredContent: { taskId: string } };
    expect(handle).toMatchObject({
      resultType: 'complete',
      structuredContent: { taskId: expect.any(String), status: 'working', pollIntervalMs: 200 },
    });
    expect(JSON.stringify(handle)).toContain('longrun_get_task');
    const followed = await plain.send('tools/call', {
      name: 'longrun_get_task',
      arguments: { taskId: handle.structuredContent.taskId, waitSeconds: 10 },
    });
    expect(followed.body.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { status: 'completed', result: { sleptMs: 10 } },
    });
    const created = (await port().send('tools/call', { name: 'echo', arguments: {} })).body
      .result as { taskId: string };
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const refused = await plain.send(method, { taskId: created.taskId });
      expect(refused.status).toBe(400);
      expect(errorOf(refused.body)).toMatchObject(required);
    }
  });

  it('framing: mismatched headers -32020, an unknown version -32022, tasks/list -32601', async () => {
    const p = port();
    const name = await p.send(
      'tools/call',
      { name: 'echo', arguments: {} },
      {
        headers: { 'mcp-name': 'sleep' },
      },
    );
    expect(name.status).toBe(400);
    expect(errorOf(name.body).code).toBe(-32020);
    const method = await p.send('tools/list', {}, { headers: { 'mcp-method': 'tools/call' } });
    expect(errorOf(method.body).code).toBe(-32020);
    const meta = await p.send(
      'tools/list',
      {},
      {
        meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' },
      },
    );
    expect(errorOf(meta.body).code).toBe(-32020);
    const version = await p.send(
      'tools/list',
      {},
      { headers: { 'mcp-protocol-version': '2099-01-01' } },
    );
    expect(version.status).toBe(400);
    expect(errorOf(version.body)).toMatchObject({
      code: -32022,
      data: { supported: ['2026-07-28'], requested: '2099-01-01' },
    });
    expect(errorOf((await p.send('tasks/list', {})).body).code).toBe(-32601);
    const bad = await p.send('tools/call', { name: 'sleep', arguments: { ms: 'soon' } });
    expect(errorOf(bad.body)).toMatchObject({
      code: -32602,
      data: { errors: [{ path: 'input.ms' }] },
    });
  });
});

describe('status pushed: subscriptions/listen', () => {
  type Message = Record<string, unknown> & { method?: string; params?: Record<string, unknown> };
  const statusOf = (m: Message) => m.params?.status as string;

  it('acknowledges the task, then pushes each status change in order to the end, and ends the subscription', async () => {
    const p = port();
    const { taskId } = (
      await p.send('tools/call', { name: 'approval', arguments: { question: 'Push it?' } })
    ).body.result as { taskId: string };
    const stream = await p.listen({ taskIds: [taskId] });
    expect(stream.status).toBe(200);
    const ack = (await stream.next()) as Message;
    expect(ack).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        _meta: { 'io.modelcontextprotocol/subscriptionId': stream.id },
        notifications: { taskIds: [taskId] },
      },
    });
    const pushed: Message[] = [];
    for (;;) {
      const m = (await stream.next()) as Message;
      expect(m).not.toBeNull();
      if (m.method !== 'notifications/tasks') {
        pushed.push(m);
        break;
      }
      pushed.push(m);
      expect(m.params).toMatchObject({
        taskId,
        _meta: { 'io.modelcontextprotocol/subscriptionId': stream.id },
      });
      if (statusOf(m) === 'input_required') {
        // Answered through the other replica (the port alternates), as any client would.
        const [key] = Object.keys(m.params!.inputRequests as object);
        const answered = await p.send('tasks/update', {
          taskId,
          inputResponses: { [key!]: { action: 'accept', content: { approved: true } } },
        });
        expect(answered.body.result).toMatchObject({ resultType: 'complete' });
      }
    }
    const statuses = pushed.slice(0, -1).map(statusOf);
    // The first is the task as it was when subscribed (the worker may have asked already).
    expect([
      ['working', 'input_required', 'working', 'completed'],
      ['input_required', 'working', 'completed'],
    ]).toContainEqual(statuses);
    const asked = pushed.find((m) => statusOf(m) === 'input_required')!;
    expect(asked.params!.inputRequests).toEqual({
      [Object.keys(asked.params!.inputRequests as object)[0]!]: {
        method: 'elicitation/create',
        params: expect.objectContaining({ mode: 'form', message: 'Push it?' }),
      },
    });
    // The terminal one is the whole DetailedTask, as tasks/get answers it.
    const done = pushed[pushed.length - 2]!.params!;
    const { resultType: _complete, _meta: _got, ...got } = await getTask(p, taskId);
    const { _meta: _pushed, ...task } = done;
    expect(task).toEqual(got);
    expect(done.result).toMatchObject({ structuredContent: { approved: true } });
    // Nothing more can come for it: the server answers the listen request, closing the stream.
    expect(pushed[pushed.length - 1]).toMatchObject({
      jsonrpc: '2.0',
      id: stream.id,
      result: {
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/subscriptionId': stream.id },
      },
    });
    expect(await stream.next()).toBeNull();
  });

  it("never acknowledges nor sends another tenant's task; an unknown id is left out the same", async () => {
    const alpha = port();
    const beta = port(KEY_B);
    const foreign = (await alpha.send('tools/call', { name: 'sleep', arguments: { ms: 400 } })).body
      .result as { taskId: string };
    const own = (await beta.send('tools/call', { name: 'sleep', arguments: { ms: 300 } })).body
      .result as { taskId: string };
    const stream = await beta.listen({ taskIds: [foreign.taskId, own.taskId, randomUUID()] });
    const messages = (await stream.rest()) as Message[];
    expect(messages[0]!.params).toMatchObject({ notifications: { taskIds: [own.taskId] } });
    const tasks = messages.filter((m) => m.method === 'notifications/tasks');
    expect(tasks.map((m) => m.params!.taskId)).toEqual(tasks.map(() => own.taskId));
    expect(tasks.map(statusOf).slice(-1)).toEqual(['completed']);
    expect(JSON.stringify(messages)).not.toContain(foreign.taskId);
    // The foreign task did run to its end meanwhile: it was not sent, not missing.
    await waitFor(async () =>
      (await getTask(alpha, foreign.taskId)).status === 'completed' ? true : undefined,
    );
  });

  it('a finished task: its terminal state, then the end; no task ids: acknowledged and ended', async () => {
    const p = port();
    const { taskId } = (await p.send('tools/call', { name: 'echo', arguments: { x: 1 } })).body
      .result as { taskId: string };
    await waitFor(async () =>
      (await getTask(p, taskId)).status === 'completed' ? true : undefined,
    );
    const finished = (await (await p.listen({ taskIds: [taskId, taskId] })).rest()) as Message[];
    expect(finished.map((m) => m.method ?? 'result')).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/tasks',
      'result',
    ]);
    expect(finished[0]!.params!.notifications).toEqual({ taskIds: [taskId] });
    expect(finished[1]!.params).toMatchObject({ taskId, status: 'completed' });
    // A filter of types this door does not push: an empty acknowledgement (the schema's "omitted").
    const other = (await (await p.listen({ toolsListChanged: true })).rest()) as Message[];
    expect(other.map((m) => m.method ?? 'result')).toEqual([
      'notifications/subscriptions/acknowledged',
      'result',
    ]);
    expect(other[0]!.params!.notifications).toEqual({});
  });

  it('bad params are -32602; task ids without the extension -32021; nothing streamed', async () => {
    const p = port();
    for (const notifications of [undefined, 'all', { taskIds: 'one' }, { taskIds: [1] }]) {
      const refused = await p.listen(notifications);
      expect(refused.status).toBe(200);
      expect(refused.error).toMatchObject({ code: -32602 });
      expect(refused.error!.message).toMatch(/params\.notifications/);
    }
    const many = Array.from({ length: 101 }, () => randomUUID());
    const tooMany = await p.listen({ taskIds: many });
    expect(tooMany.error).toMatchObject({ code: -32602, message: expect.stringMatching(/100/) });
    const plain = await port(KEY_A, false).listen({ taskIds: [randomUUID()] });
    expect(plain.status).toBe(400);
    expect(plain.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } } },
    });
  });
});

describe('restarts', () => {
  it('a task outlives the replica that created it', async () => {
    const p = port();
    const created = (await p.send('tools/call', { name: 'sleep', arguments: { ms: 1000 } })).body
      .result as { taskId: string };
    await stack.restart(0);
    await waitFor(async () =>
      (await getTask(p, created.taskId)).status === 'completed' ? true : undefined,
    );
    for (let i = 0; i < 2; i++) {
      expect(await getTask(p, created.taskId)).toMatchObject({
        result: { structuredContent: { sleptMs: 1000 } },
      });
    }
    expect(new Set(p.exchanges.slice(-2).map((e) => e.url)).size).toBe(2); // both replicas
  });
});

describe('the README', () => {
  it('Tasks V2 client snippet runs as shown', async () => {
    const [, snippet] = readmeMcpSnippets();
    const run = await runSnippet(snippet!, stack.apis[1]!.url, KEY_A);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual([
      'task working',
      'asked: Ship release 42?',
      'completed { approved: true }',
      'cancelled',
    ]);
  });
});
