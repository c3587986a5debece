/**
 * The MCP door, 2025-11-25 generation (the tasks utility), driven by the official SDK `Client`
 * and `StreamableHTTPClientTransport` against the running service: the stock worker process and
 * two API processes on one Redis prefix, behind a round-robin balancer (tests/helpers/mcp.ts) that
 * sends each request to the next replica and every elicitation answer to the replica that does not
 * hold the `tasks/result` stream it answers. Every task is also read at `GET /v1/jobs/<id>`.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError,
  TaskStatusNotificationSchema,
  ToolListChangedNotificationSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createCatalog, defineJobType } from '@longrun/core';
import { createRedis } from '@longrun/engine';
import { z } from 'zod';
import { httpClient, waitFor } from './helpers/http.js';
import {
  Balancer,
  readmeMcpSnippets,
  runSnippet,
  startMcpStack,
  type McpStack,
} from './helpers/mcp.js';
import { KEY_A, KEY_B, registerTypes } from './helpers/service.js';

const cleanups = new Set<() => unknown>();
let stack: McpStack;
let lb: Balancer;
/** Tenant alpha, through the balancer, answering elicitations with `answer`. */
let alpha: Client;
let answer: (params: unknown) => ElicitResult = () => ({ action: 'cancel' });
const elicited: unknown[] = [];

async function connect(
  key: string,
  opts: { elicitation?: boolean; tasks?: boolean; balancer?: Balancer } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const balancer = opts.balancer ?? lb;
  const transport = new StreamableHTTPClientTransport(balancer.url, {
    fetch: balancer.fetch,
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client(
    { name: 'longrun-tests', version: '1.0.0' },
    {
      capabilities: {
        ...(opts.elicitation ? { elicitation: { form: {} } } : {}),
        // A client that takes part in tasks says so; see mcp-follow.test.ts for one that does not.
        ...(opts.tasks === false ? {} : { tasks: { list: {}, cancel: {} } }),
      },
    },
  );
  client.onerror = () => undefined; // the GET stream of a stopped replica reconnects
  await client.connect(transport);
  cleanups.add(() => client.close());
  return { client, transport };
}

/** The HTTP API, as tenant alpha, on one replica. */
const http = (replica = 0) => httpClient(stack.apis[replica]!.url, KEY_A);

/** Creates a task with a plain `tools/call` + `params.task` (the SDK's wire request). */
async function createTask(client: Client, name: string, args: unknown, ttl = 60_000) {
  const created = await client.request(
    {
      method: 'tools/call',
      params: { name, arguments: args as Record<string, unknown>, task: { ttl } },
    },
    CreateTaskResultSchema,
  );
  return created.task;
}

/** The JSON-RPC error a call rejects with. */
async function rpcError(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  const { code, message } = error as McpError;
  return { code, message };
}

beforeAll(async () => {
  stack = await startMcpStack(cleanups);
  lb = new Balancer(stack);
  ({ client: alpha } = await connect(KEY_A, { elicitation: true }));
  alpha.setRequestHandler(ElicitRequestSchema, (request) => {
    elicited.push(request.params);
    return answer(request.params);
  });
}, 60_000);

afterAll(async () => {
  for (const fn of [...cleanups].reverse()) await Promise.resolve(fn()).catch(() => undefined);
});

describe('the /mcp endpoint', () => {
  it('answers 401 without a valid bearer key, on every method', async () => {
    for (const method of ['POST', 'GET', 'DELETE']) {
      for (const key of [undefined, 'not-a-key-0123456789']) {
        const res = await fetch(`${stack.apis[0]!.url}/mcp`, {
          method,
          headers: key ? { authorization: `Bearer ${key}` } : {},
        });
        expect(res.status, `${method} ${key}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
    }
    // A browser page whose origin is not this machine (DNS rebinding) is refused first: 403.
    for (const [origin, host, status] of [
      ['http://evil.example.com', 'evil.example.com', 403],
      ['http://evil.example.com', '127.0.0.1', 403],
      ['http://127.0.0.1:1', 'evil.example.com', 403],
      ['http://localhost:3000', 'localhost:3000', 401],
    ] as const) {
      const res = await new Promise<number>((done, fail) => {
        const req = httpRequest(
          `${stack.apis[0]!.url}/mcp`,
          { method: 'POST', headers: { origin, host } },
          (r) => {
            r.resume();
            done(r.statusCode ?? 0);
          },
        );
        req.on('error', fail);
        req.end('{}');
      });
      expect(res, `${origin} ${host}`).toBe(status);
    }
    const transport = new StreamableHTTPClientTransport(lb.url, { fetch: lb.fetch });
    const client = new Client({ name: 'anonymous', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toThrow(/401|Unauthorized/);
  });

  it('initialize on one replica gives a session every replica serves; no server state to end', async () => {
    const balancer = new Balancer(stack);
    const { client, transport } = await connect(KEY_A, { balancer });
    expect(client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: true },
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
    expect(transport.sessionId).toMatch(/^lr1\./);
    for (let i = 0; i < 4; i++) await client.listTools();
    const served = new Set(
      balancer.log.filter((r) => r.rpc === 'tools/list').map((r) => r.replica),
    );
    expect(served).toEqual(new Set([0, 1]));

    const post = (sessionId?: string) =>
      fetch(`${stack.apis[1]!.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${KEY_A}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await post()).status).toBe(400);
    expect((await post('made-up-session')).status).toBe(404);
    const del = await fetch(`${stack.apis[1]!.url}/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${KEY_A}`, 'mcp-session-id': transport.sessionId! },
    });
    expect(del.status).toBe(405);
    await transport.terminateSession(); // the SDK takes 405 as "the server keeps no session"
  });
});

describe('tools', () => {
  it('are the registered job types, with the registry input schemas and task support', async () => {
    const { tools } = await alpha.listTools();
    const registry = (await http()('GET', '/v1/job-types')).body.jobTypes as {
      name: string;
      inputSchema: Record<string, unknown>;
    }[];
    const follow = [
      'longrun_get_task',
      'longrun_answer_task',
      'longrun_cancel_task',
      'longrun_list_tasks',
    ];
    expect(tools.map((t) => t.name)).toEqual([...registry.map((t) => t.name).sort(), ...follow]);
    for (const tool of tools.filter((t) => !follow.includes(t.name))) {
      const type = registry.find((t) => t.name === tool.name)!;
      expect(tool.inputSchema).toEqual(type.inputSchema);
      expect(tool.description).toBe(type.inputSchema.description);
    }
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    expect(support).toEqual({
      approval: 'required',
      durable: 'required',
      echo: 'required',
      fail: 'optional',
      flaky: 'optional',
      sleep: 'required',
      longrun_get_task: 'forbidden',
      longrun_answer_task: 'forbidden',
      longrun_cancel_task: 'forbidden',
      longrun_list_tasks: 'forbidden',
    });
  });

  it('tell the client when a worker registers a new type (notifications/tools/list_changed)', async () => {
    const { client } = await connect(KEY_A);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    await waitFor(async () => lb.log.some((r) => r.httpMethod === 'GET') || undefined);
    const redis = createRedis(inject('redisUrl'), 'producer');
    cleanups.add(() => redis.quit());
    const report = defineJobType({
      name: 'report',
      input: z.strictObject({ format: z.enum(['pdf', 'csv']) }).describe('Builds a report.'),
      handler: () => ({}),
    });
    await registerTypes(redis, stack.prefix, createCatalog([report]), 'report-worker');
    await waitFor(async () => changed > 0 || undefined, { what: 'tools/list_changed' });
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'report')).toMatchObject({
      description: 'Builds a report.',
      inputSchema: { properties: { format: { enum: ['pdf', 'csv'] } } },
      execution: { taskSupport: 'required' },
    });
  });
});

describe('tasks', () => {
  it('callToolStream runs a task to completion; it is the same task over HTTP', async () => {
    const seen: string[] = [];
    let taskId = '';
    let result: unknown;
    for await (const message of alpha.experimental.tasks.callToolStream(
      { name: 'sleep', arguments: { ms: 400 } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      seen.push(message.type);
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect(seen[0]).toBe('taskCreated');
    expect(seen).toContain('taskStatus');
    expect(seen.at(-1)).toBe('result');
    expect(result).toMatchObject({
      structuredContent: { sleptMs: 400 },
      content: [{ type: 'text', text: '{"sleptMs":400}' }],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId } },
    });

    const task = await alpha.experimental.tasks.getTask(taskId);
    expect(task).toMatchObject({ taskId, status: 'completed', ttl: 60_000, pollInterval: 200 });
    const overHttp = await http(1)('GET', `/v1/jobs/${taskId}`);
    expect(overHttp.body).toMatchObject({
      taskId,
      type: 'sleep',
      status: 'completed',
      result: { sleptMs: 400 },
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
    });
    const listed = await alpha.experimental.tasks.listTasks();
    expect(listed.tasks.find((t) => t.taskId === taskId)).toMatchObject({ status: 'completed' });
  });

  it('clamps a requested ttl to LONGRUN_MAX_TTL_MS and reports the ttl given', async () => {
    const task = await createTask(alpha, 'echo', { n: 1 }, 100 * stack.maxTtlMs);
    expect(task.ttl).toBe(stack.maxTtlMs);
    expect((await http()('GET', `/v1/jobs/${task.taskId}`)).body.ttlMs).toBe(stack.maxTtlMs);
    expect((await createTask(alpha, 'echo', { n: 2 }, 10)).ttl).toBe(1000); // the engine's least
  });

  it('cancelTask cancels a running task wherever it runs', async () => {
    const task = await createTask(alpha, 'sleep', { ms: 60_000 });
    await waitFor(async () =>
      (await http()('GET', `/v1/jobs/${task.taskId}`)).body.statusMessage === 'running'
        ? true
        : undefined,
    ).catch(() => undefined); // a cancel before the run starts is as good
    const cancelled = await alpha.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect((await http(1)('GET', `/v1/jobs/${task.taskId}`)).body.status).toBe('cancelled');
    expect(await rpcError(alpha.experimental.tasks.cancelTask(task.taskId))).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/terminal status: cancelled/),
    });
    const result = await alpha.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result).toMatchObject({ isError: true, content: [{ text: 'The task was cancelled' }] });
  });

  it('a failing job: failed, its message in statusMessage and in an isError result', async () => {
    const statuses: { status: string; statusMessage?: string | undefined }[] = [];
    let taskId = '';
    for await (const message of alpha.experimental.tasks.callToolStream(
      { name: 'fail', arguments: { message: 'disk on fire' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'taskStatus') statuses.push(message.task);
    }
    expect(statuses.at(-1)).toMatchObject({ status: 'failed', statusMessage: 'disk on fire' });
    const result = await alpha.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'disk on fire' }],
    });
    expect((await http()('GET', `/v1/jobs/${taskId}`)).body).toMatchObject({
      status: 'failed',
      error: { message: 'disk on fire' },
    });
  });

  it('a plain call of a short tool answers its result; of a long tool, its handle', async () => {
    await alpha.listTools(); // what the client checks a call against
    const flaky = await alpha.callTool({ name: 'flaky', arguments: { failTimes: 1 } });
    expect(flaky).toMatchObject({ structuredContent: { attempt: 2 } });
    const fail = await alpha.callTool({ name: 'fail', arguments: { message: 'no' } });
    expect(fail).toMatchObject({ isError: true, content: [{ text: 'no' }] });
    // The SDK client (it declared tasks, so sleep is listed required) refuses before sending; a
    // raw plain call gets the handle as a tool result, as a client without tasks does (issue 32).
    await expect(alpha.callTool({ name: 'sleep', arguments: { ms: 1 } })).rejects.toThrow(
      /requires task-based execution/,
    );
    const sleep = await alpha.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 1 } } },
      CallToolResultSchema,
    );
    expect(sleep.isError).toBeUndefined();
    expect(sleep.structuredContent).toMatchObject({ type: 'sleep', status: 'working' });
    expect(JSON.stringify(sleep.content)).toMatch(/longrun_get_task/);
  });

  it("a plain call stops waiting after the tool's bound and cancels its task", async () => {
    // A short type (its runs are bounded by timeoutMs) on a queue no worker takes.
    const redis = createRedis(inject('redisUrl'), 'producer');
    cleanups.add(() => redis.quit());
    const stuck = defineJobType({
      name: 'stuck',
      queue: 'stuck',
      input: z.strictObject({}),
      timeoutMs: 500,
      handler: () => ({}),
    });
    await registerTypes(redis, stack.prefix, createCatalog([stuck]), 'stuck-worker');
    await alpha.listTools();
    const started = Date.now();
    const result = await alpha.callTool({ name: 'stuck', arguments: {} });
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_000); // timeoutMs + 5 s of queue room
    expect(result).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/did not finish within 5500 ms and was cancelled/) }],
    });
    const listed = (await http()('GET', '/v1/jobs?type=stuck')).body.tasks;
    expect(listed).toEqual([expect.objectContaining({ status: 'cancelled' })]);
  });

  it('refuses bad arguments with the fields named, creating nothing', async () => {
    const before = (await http()('GET', '/v1/jobs?limit=100')).body.tasks.length;
    const error = await rpcError(createTask(alpha, 'sleep', { ms: 'soon' }));
    expect(error.code).toBe(-32602);
    const sdk = await alpha.callTool({ name: 'flaky', arguments: { failTimes: 9 } });
    expect(sdk).toMatchObject({ isError: true });
    expect(JSON.stringify(sdk.content)).toMatch(/input\.failTimes/);
    expect((await http()('GET', '/v1/jobs?limit=100')).body.tasks.length).toBe(before);
  });

  it('answers a call of an unknown tool with the protocol error -32602, not a tool result', async () => {
    // The specification makes an unknown tool a JSON-RPC error (invalid params); a tool result
    // with isError would be the tool's own failure (issue 27).
    const plain = await rpcError(
      alpha.request(
        { method: 'tools/call', params: { name: 'no-such-tool', arguments: {} } },
        CallToolResultSchema,
      ),
    );
    expect(plain.code).toBe(-32602);
    expect(plain.message).toMatch(/no-such-tool/);
    const asTask = await rpcError(createTask(alpha, 'no-such-tool', {}));
    expect(asTask.code).toBe(-32602);
    expect(asTask.message).toMatch(/no-such-tool/);
  });
});

describe('status push', () => {
  it("the GET stream carries notifications/tasks/status for each status change of the tenant's tasks", async () => {
    const { client } = await connect(KEY_A);
    const pushed: { taskId: string; status: string }[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
      pushed.push({ taskId: n.params.taskId, status: n.params.status });
    });
    const from = lb.log.length;
    await waitFor(
      async () => lb.log.slice(from - 5).some((r) => r.httpMethod === 'GET') || undefined,
    );
    await new Promise((r) => setTimeout(r, 1500)); // the stream's first read of the tasks
    const { client: beta } = await connect(KEY_B);
    const theirs = await createTask(beta, 'sleep', { ms: 100 });
    // Made through another client, on either replica: the stream's replica hears of it.
    const sleep = await createTask(alpha, 'sleep', { ms: 300 });
    const approval = await createTask(alpha, 'approval', { question: 'Pushed?' });
    const of = (id: string) => pushed.filter((p) => p.taskId === id).map((p) => p.status);
    await waitFor(async () => of(sleep.taskId).includes('completed') || undefined, {
      what: 'the sleep task completed, pushed',
    });
    await waitFor(async () => of(approval.taskId).includes('input_required') || undefined, {
      what: 'the approval input_required, pushed',
    });
    await alpha.experimental.tasks.cancelTask(approval.taskId);
    await waitFor(async () => of(approval.taskId).includes('cancelled') || undefined, {
      what: 'the cancel, pushed',
    });
    // Each change once, in order; never another tenant's task.
    expect(of(approval.taskId)).toEqual(
      ['working', 'input_required', 'cancelled'].slice(-of(approval.taskId).length),
    );
    expect(of(sleep.taskId).at(-1)).toBe('completed');
    expect(new Set(of(sleep.taskId)).size).toBe(of(sleep.taskId).length);
    await beta.experimental.tasks.getTaskResult(theirs.taskId, CallToolResultSchema);
    expect(of(theirs.taskId)).toEqual([]);
  });
});

describe('input_required', () => {
  it('the approval is answered through elicitation on the tasks/result stream, across replicas', async () => {
    answer = () => ({ action: 'accept', content: { approved: true, comment: 'ship it' } });
    elicited.length = 0;
    const from = lb.log.length;
    let taskId = '';
    let result: unknown;
    for await (const message of alpha.experimental.tasks.callToolStream(
      { name: 'approval', arguments: { question: 'Deploy to production?' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect(elicited).toEqual([
      expect.objectContaining({
        mode: 'form',
        message: 'Deploy to production?',
        requestedSchema: expect.objectContaining({ required: ['approved'] }),
        _meta: { 'io.modelcontextprotocol/related-task': { taskId } },
      }),
    ]);
    expect(result).toMatchObject({ structuredContent: { approved: true, comment: 'ship it' } });
    // The answer went to the replica that did not hold the tasks/result stream.
    const routed = lb.log.slice(from);
    const stream = routed.find((r) => r.rpc === 'tasks/result')!;
    const reply = routed.find((r) => r.rpc === 'response')!;
    expect(reply.replica).not.toBe(stream.replica);
    expect((await http()('GET', `/v1/jobs/${taskId}`)).body).toMatchObject({
      status: 'completed',
      result: { approved: true, comment: 'ship it' },
    });
  });

  it('an answer the request refuses is asked again, saying why', async () => {
    const messages: string[] = [];
    answer = (params): ElicitResult => {
      messages.push((params as { message: string }).message);
      // The first answer passes the client's check of the form but not the job's schema (it
      // allows no other field): the server asks again on the same stream.
      return messages.length === 1
        ? { action: 'accept', content: { approved: true, note: 'extra' } }
        : { action: 'accept', content: { approved: false } };
    };
    let result: unknown;
    for await (const message of alpha.experimental.tasks.callToolStream(
      { name: 'approval', arguments: { question: 'Merge?' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect(result).toMatchObject({ structuredContent: { approved: false } });
    expect(messages).toHaveLength(2);
    expect(messages[1]).toMatch(/^Merge\?\n\nThe previous answer was refused: .*note/);
  });

  it('a client that cannot take the elicitation is not asked again; an answer from elsewhere resumes it', async () => {
    // Declares form elicitation but has no handler: its SDK answers -32601.
    const { client } = await connect(KEY_A, { elicitation: true });
    const task = await createTask(client, 'approval', { question: 'Who answers?' });
    await waitFor(async () =>
      (await client.experimental.tasks.getTask(task.taskId)).status === 'input_required'
        ? true
        : undefined,
    );
    const from = lb.log.length;
    const pending = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    await waitFor(async () => lb.log.slice(from).some((r) => r.rpc === 'response') || undefined, {
      what: "the client's error answer",
    });
    await new Promise((r) => setTimeout(r, 300));
    await http(1)('POST', `/v1/jobs/${task.taskId}/input`, { body: { input: { approved: true } } });
    expect(await pending).toMatchObject({ structuredContent: { approved: true } });
    expect(lb.log.slice(from).filter((r) => r.rpc === 'response')).toHaveLength(1);
  });

  it('a declined elicitation cancels the task that needed the answer', async () => {
    answer = () => ({ action: 'decline' });
    let taskId = '';
    let result: unknown;
    for await (const message of alpha.experimental.tasks.callToolStream(
      { name: 'approval', arguments: { question: 'Delete everything?' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'result') result = message.result;
    }
    expect(result).toMatchObject({ isError: true });
    expect((await http()('GET', `/v1/jobs/${taskId}`)).body.status).toBe('cancelled');
  });

  it('a client without elicitation waits on tasks/result while the answer comes over HTTP', async () => {
    const { client } = await connect(KEY_A);
    const task = await createTask(client, 'approval', { question: 'Answer elsewhere?' });
    await waitFor(async () =>
      (await client.experimental.tasks.getTask(task.taskId)).status === 'input_required'
        ? true
        : undefined,
    );
    const pending = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    const answered = await http(1)('POST', `/v1/jobs/${task.taskId}/input`, {
      body: { input: { approved: false } },
    });
    expect(answered.status).toBe(200);
    expect(await pending).toMatchObject({ structuredContent: { approved: false } });
  });
});

describe('tenants', () => {
  it("another tenant's task is refused exactly like an unknown id, and never listed", async () => {
    const { client: beta } = await connect(KEY_B, { elicitation: true });
    const mine = await createTask(alpha, 'approval', { question: 'Whose task?' });
    const unknown = randomUUID();
    const tasks = beta.experimental.tasks;
    for (const call of [
      (id: string) => tasks.getTask(id),
      (id: string) => tasks.cancelTask(id),
      (id: string) => tasks.getTaskResult(id, CallToolResultSchema),
    ]) {
      const foreign = await rpcError(call(mine.taskId));
      const missing = await rpcError(call(unknown));
      expect(foreign.code).toBe(-32602);
      expect(foreign.message.replace(mine.taskId, '<id>')).toBe(
        missing.message.replace(unknown, '<id>'),
      );
    }
    const listed = await tasks.listTasks();
    expect(listed.tasks.some((t) => t.taskId === mine.taskId)).toBe(false);
    await waitFor(async () =>
      (await alpha.experimental.tasks.getTask(mine.taskId)).status === 'input_required'
        ? true
        : undefined,
    );
    // An answer forged by beta for alpha's question is dropped.
    const stamp = Date.parse((await alpha.experimental.tasks.getTask(mine.taskId)).lastUpdatedAt);
    const forged = await fetch(`${stack.apis[0]!.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY_B}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        'mcp-session-id': 'lr1.AAAAAAAAAAAAAAAAAAAAAA.e',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: `longrun-input:${mine.taskId}:input-${stamp.toString(36)}:x`,
        result: { action: 'accept', content: { approved: true } },
      }),
    });
    expect(forged.status).toBe(202);
    await new Promise((r) => setTimeout(r, 300));
    expect((await alpha.experimental.tasks.getTask(mine.taskId)).status).toBe('input_required');
    await alpha.experimental.tasks.cancelTask(mine.taskId);
  });
});

describe('the README', () => {
  it('2025-11-25 client snippet runs as shown', async () => {
    const [snippet] = readmeMcpSnippets();
    const run = await runSnippet(snippet!, stack.apis[0]!.url, KEY_A);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^approval:required durable:required echo:required fail:optional flaky:optional /m,
    );
    expect(run.stdout).toContain('asked: Ship release 42?');
    expect(run.stdout).toMatch(/^\{ approved: true \}$/m);
    expect(run.stdout.trim().split('\n').slice(-3)).toEqual(['working', 'true', 'cancelled']);
  });
});

describe('restarts', () => {
  it('a session and its tasks survive an API restart', async () => {
    const task = await createTask(alpha, 'sleep', { ms: 1500 });
    await stack.restart(0);
    await stack.restart(1);
    const seen = await alpha.experimental.tasks.getTask(task.taskId);
    expect(seen.taskId).toBe(task.taskId);
    const result = await alpha.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result).toMatchObject({ structuredContent: { sleptMs: 1500 } });
  });
});
