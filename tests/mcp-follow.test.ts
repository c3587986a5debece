/**
 * Agents without MCP Tasks (issue 32): the official SDK `Client`, declaring no tasks capability,
 * against the running service (the stock worker and two API processes on one Redis prefix behind
 * the round-robin balancer of tests/helpers/mcp.ts, so consecutive calls go to alternate
 * replicas). A long tool answers its handle as a tool result; the follow tools
 * (`longrun_get_task`, `longrun_answer_task`, `longrun_cancel_task`, `longrun_list_tasks`) drive
 * it to the end.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  McpError,
  type CallToolResult,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient } from './helpers/http.js';
import { Balancer, startMcpStack, type McpStack } from './helpers/mcp.js';
import { KEY_A, KEY_B } from './helpers/service.js';

const cleanups = new Set<() => unknown>();
let stack: McpStack;
let lb: Balancer;
let alpha: Client;
let beta: Client;

interface View {
  taskId: string;
  type: string;
  status: string;
  statusMessage: string;
  pollIntervalMs: number;
  progress?: unknown;
  result?: unknown;
  error?: unknown;
  inputRequest?: { message: string; schema: Record<string, unknown> };
}

/** A client as most agents are today: no tasks capability, plain tools/call only. */
async function connect(key: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(lb.url, {
    fetch: lb.fetch,
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'plain-agent', version: '1.0.0' }, { capabilities: {} });
  client.onerror = () => undefined;
  await client.connect(transport);
  cleanups.add(() => client.close());
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

const view = (result: CallToolResult) => result.structuredContent as unknown as View;
const text = (result: CallToolResult) =>
  result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** longrun_get_task with a wait, until the task is in one of `statuses` (each call bounded). */
async function getUntil(client: Client, taskId: string, statuses: string[]): Promise<View> {
  for (let i = 0; i < 20; i++) {
    const got = await call(client, 'longrun_get_task', { taskId, waitSeconds: 10 });
    expect(got.isError, text(got)).toBeFalsy();
    if (statuses.includes(view(got).status)) return view(got);
  }
  throw new Error(`task ${taskId} never reached ${statuses.join('|')}`);
}

beforeAll(async () => {
  stack = await startMcpStack(cleanups);
  lb = new Balancer(stack);
  alpha = await connect(KEY_A);
  beta = await connect(KEY_B);
}, 60_000);

afterAll(async () => {
  for (const fn of [...cleanups].reverse()) await Promise.resolve(fn()).catch(() => undefined);
});

describe('a client without the tasks capability', () => {
  it('sees every tool callable (no taskSupport "required") and the four follow tools', async () => {
    const { tools } = await alpha.listTools();
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    expect(support).toEqual({
      approval: 'optional',
      durable: 'optional',
      echo: 'optional',
      fail: 'optional',
      flaky: 'optional',
      sleep: 'optional',
      longrun_get_task: 'forbidden',
      longrun_answer_task: 'forbidden',
      longrun_cancel_task: 'forbidden',
      longrun_list_tasks: 'forbidden',
    });
    const get = tools.find((t) => t.name === 'longrun_get_task')!;
    expect(get.inputSchema).toMatchObject({
      type: 'object',
      properties: { taskId: { type: 'string' }, waitSeconds: { minimum: 0, maximum: 50 } },
      required: ['taskId'],
    });
  });

  it('a long tool answers its handle at once; longrun_get_task follows it to the result, on alternate replicas', async () => {
    const from = lb.log.length;
    const started = await call(alpha, 'sleep', { ms: 1200 });
    expect(started.isError).toBeFalsy();
    const handle = view(started);
    expect(handle).toMatchObject({
      type: 'sleep',
      status: 'working',
      statusMessage: expect.any(String),
      pollIntervalMs: 200,
    });
    expect(text(started)).toContain(`Started task ${handle.taskId}`);
    expect(text(started)).toContain(
      `longrun_get_task with {"taskId":"${handle.taskId}","waitSeconds":30}`,
    );
    const done = await getUntil(alpha, handle.taskId, ['completed']);
    expect(done).toMatchObject({ taskId: handle.taskId, result: { sleptMs: 1200 } });
    // The same task over HTTP, and the calls were served by both replicas.
    const overHttp = await httpClient(stack.apis[1]!.url, KEY_A)(
      'GET',
      `/v1/jobs/${handle.taskId}`,
    );
    expect(overHttp.body).toMatchObject({ status: 'completed', result: { sleptMs: 1200 } });
    const served = lb.log.slice(from).filter((r) => r.rpc === 'tools/call');
    expect(new Set(served.map((r) => r.replica))).toEqual(new Set([0, 1]));
  });

  it('an approval: the question in longrun_get_task, a bad answer a tool error naming the field, then answered', async () => {
    const started = view(await call(alpha, 'approval', { question: 'Ship release 42?' }));
    const asked = await getUntil(alpha, started.taskId, ['input_required']);
    expect(asked.inputRequest).toMatchObject({
      message: 'Ship release 42?',
      schema: { required: ['approved'] },
    });
    const bad = await call(alpha, 'longrun_answer_task', {
      taskId: started.taskId,
      input: { approved: 'yes' },
    });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/input\.approved/);
    expect(text(bad)).toMatch(/longrun_answer_task again/);
    expect(
      (await httpClient(stack.apis[0]!.url, KEY_A)('GET', `/v1/jobs/${started.taskId}`)).body,
    ).toMatchObject({ status: 'input_required' });
    const good = await call(alpha, 'longrun_answer_task', {
      taskId: started.taskId,
      input: { approved: true, comment: 'ship it' },
    });
    expect(good.isError, text(good)).toBeFalsy();
    expect(['working', 'completed']).toContain(view(good).status);
    const done = await getUntil(alpha, started.taskId, ['completed']);
    expect(done.result).toEqual({ approved: true, comment: 'ship it' });
    // Answering again: the task no longer waits.
    const late = await call(alpha, 'longrun_answer_task', {
      taskId: started.taskId,
      input: { approved: false },
    });
    expect(late.isError).toBe(true);
    expect(text(late)).toMatch(/is not waiting for input \(it is completed\)/);
  });

  it('longrun_cancel_task cancels a running task; a second cancel says it has finished', async () => {
    const started = view(await call(alpha, 'sleep', { ms: 60_000 }));
    const cancelled = await call(alpha, 'longrun_cancel_task', { taskId: started.taskId });
    expect(cancelled.isError, text(cancelled)).toBeFalsy();
    expect(view(cancelled).status).toBe('cancelled');
    expect(
      (await httpClient(stack.apis[1]!.url, KEY_A)('GET', `/v1/jobs/${started.taskId}`)).body
        .status,
    ).toBe('cancelled');
    const again = await call(alpha, 'longrun_cancel_task', { taskId: started.taskId });
    expect(again.isError).toBe(true);
    expect(text(again)).toMatch(/already finished/);
    expect(view(await call(alpha, 'longrun_get_task', { taskId: started.taskId })).status).toBe(
      'cancelled',
    );
  });

  it("another tenant's task is not found, exactly like an unknown id, and never listed", async () => {
    const mine = view(await call(alpha, 'approval', { question: 'Whose task?' }));
    const unknown = randomUUID();
    for (const [name, extra] of [
      ['longrun_get_task', { waitSeconds: 1 }],
      ['longrun_answer_task', { input: { approved: true } }],
      ['longrun_cancel_task', {}],
    ] as const) {
      const foreign = await call(beta, name, { taskId: mine.taskId, ...extra });
      const missing = await call(beta, name, { taskId: unknown, ...extra });
      expect(foreign.isError, name).toBe(true);
      expect(text(foreign)).toMatch(/not found/);
      expect(text(foreign).replace(mine.taskId, '<id>')).toBe(
        text(missing).replace(unknown, '<id>'),
      );
    }
    const listed = view(await call(beta, 'longrun_list_tasks', {})) as unknown as {
      tasks: View[];
    };
    expect(listed.tasks.some((t) => t.taskId === mine.taskId)).toBe(false);
    // Still alpha's, untouched.
    const own = await call(alpha, 'longrun_list_tasks', { type: 'approval' });
    const tasks = (own.structuredContent as { tasks: View[] }).tasks;
    expect(tasks.find((t) => t.taskId === mine.taskId)).toBeDefined();
    expect(tasks.every((t) => t.type === 'approval')).toBe(true);
    await call(alpha, 'longrun_cancel_task', { taskId: mine.taskId });
  });

  it('bad arguments are tool errors naming the field; an unknown tool is the protocol error -32602', async () => {
    const wait = await call(alpha, 'longrun_get_task', { taskId: randomUUID(), waitSeconds: 99 });
    expect(wait.isError).toBe(true);
    expect(text(wait)).toMatch(/waitSeconds/);
    const missing = await call(alpha, 'longrun_answer_task', { input: {} });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/taskId/);
    const status = await call(alpha, 'longrun_list_tasks', { status: 'sleeping' });
    expect(status.isError).toBe(true);
    expect(text(status)).toMatch(/status/);
    const error = await alpha
      .request(
        { method: 'tools/call', params: { name: 'longrun_nope', arguments: {} } },
        CallToolResultSchema,
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
  });

  it('a short tool still answers its result in the same call', async () => {
    const flaky = await call(alpha, 'flaky', { failTimes: 1 });
    expect(flaky.structuredContent).toEqual({ attempt: 2 });
  });
});

describe('progress', () => {
  it('a waiting call with a progressToken gets notifications/progress as the task reports it', async () => {
    const started = view(await call(alpha, 'sleep', { ms: 3500 }));
    const seen: Progress[] = [];
    const done = await alpha.callTool(
      { name: 'longrun_get_task', arguments: { taskId: started.taskId, waitSeconds: 30 } },
      CallToolResultSchema,
      { onprogress: (p) => seen.push(p) },
    );
    expect(view(done as CallToolResult).status).toBe('completed');
    expect(seen.length).toBeGreaterThan(0);
    for (const p of seen) expect(p).toMatchObject({ total: 100, message: expect.any(String) });
    // The worker's own reports (its statusMessage), before the completion's 100.
    expect(seen.some((p) => /^slept \d+ of 3500 ms$/.test(p.message ?? ''))).toBe(true);
    const values = seen.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
  });
});

/** The README's exchange as the server answers it now: each call and its result, one per line. */
async function readmeExchange(client: Client): Promise<string> {
  const lines: string[] = [];
  const step = async (name: string, args: Record<string, unknown>) => {
    const result = await call(client, name, args);
    lines.push(`→ tools/call ${JSON.stringify({ name, arguments: args })}`);
    lines.push(`← ${JSON.stringify(result)}`);
    return result;
  };
  const started = await step('approval', { question: 'Ship release 42?' });
  const taskId = view(started).taskId;
  await step('longrun_get_task', { taskId, waitSeconds: 30 });
  await step('longrun_answer_task', { taskId, input: { approved: true } });
  await step('longrun_get_task', { taskId, waitSeconds: 30 });
  return normalise(lines.join('\n'));
}

/** Ids and the test stack's poll interval as the README shows them (the defaults). */
function normalise(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, README_TASK_ID)
    .replaceAll('"pollIntervalMs":200', '"pollIntervalMs":5000');
}

const README_TASK_ID = '0b4e7d62-5d0f-4b1e-9c3a-2f6e8a1d7c55';
const README = resolve(import.meta.dirname, '../README.md');
const EXCHANGE = /(## Agents without MCP Tasks\n[\s\S]*?```text\n)([\s\S]*?)(```)/;

describe('the README', () => {
  it('"Agents without MCP Tasks" shows the exchange exactly as the server answers it', async () => {
    const exchange = await readmeExchange(alpha);
    const readme = readFileSync(README, 'utf8');
    // LONGRUN_UPDATE_README=1 writes it (how the section was made); otherwise it must match.
    if (process.env.LONGRUN_UPDATE_README === '1') {
      writeFileSync(
        README,
        readme.replace(EXCHANGE, (_m, a, _b, c) => `${a}${exchange}\n${c}`),
      );
    }
    const shown = EXCHANGE.exec(readFileSync(README, 'utf8'));
    expect(shown, 'the README section with its ```text exchange').not.toBeNull();
    expect(shown![2]!.trimEnd()).toBe(exchange);
  });
});
