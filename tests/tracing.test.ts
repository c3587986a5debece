// OpenTelemetry traces (issue 30, decision 65): the API and a worker, real processes with the
// OTLP/HTTP exporter pointed at a receiver this test runs on 127.0.0.1, put a submit sent with a
// W3C traceparent, its runs (a retry linked to the run it follows), its webhook delivery and
// their log lines in one trace; the handle names it. Without the OTEL_* variables, nothing.
import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { httpClient, waitFor } from './helpers/http.js';
import { V2Port } from './helpers/mcp-v2-port.js';
import { otlpReceiver, type OtlpReceiver, type ReceivedSpan } from './helpers/otlp.js';
import { startApiProcess, type ApiProcess, type Proc } from './helpers/processes.js';
import { promptReceiver, type PromptReceiver } from './helpers/receivers.js';
import { API_KEYS, KEY_A, startWorker, uniquePrefix } from './helpers/service.js';

const PRODUCER = 4;
const CONSUMER = 5;
const CLIENT = 3;
const ERROR = 2;

const cleanups: (() => unknown)[] = [];
const registry = { add: (fn: () => unknown) => void cleanups.push(fn) };
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await Promise.resolve()
      .then(cleanup)
      .catch(() => undefined);
  }
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** The variables that turn tracing on, as an operator would set them. */
function otelEnv(collector: OtlpReceiver, service: string): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: service,
    // Export every 100 ms (default 5 s), so the test need not wait.
    OTEL_BSP_SCHEDULE_DELAY: '100',
    // As docker-compose.yml passes the settings nobody set: empty is unset.
    OTEL_SDK_DISABLED: '',
    OTEL_TRACES_EXPORTER: '',
    OTEL_EXPORTER_OTLP_HEADERS: '',
    OTEL_RESOURCE_ATTRIBUTES: '',
    OTEL_TRACES_SAMPLER: '',
    OTEL_TRACES_SAMPLER_ARG: '',
  };
}

describe('with the OTEL_* variables set', () => {
  let collector: OtlpReceiver;
  let hooks: PromptReceiver;
  let api: ApiProcess;
  let worker: Proc;

  beforeAll(async () => {
    collector = await otlpReceiver();
    cleanups.push(() => collector.close());
    hooks = await promptReceiver();
    cleanups.push(() => hooks.close());
    const prefix = uniquePrefix();
    api = await startApiProcess(registry, {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
      LONGRUN_WEBHOOK_ALLOW: '127.0.0.1',
      ...otelEnv(collector, 'trace-test-api'),
    });
    worker = await startWorker(prefix, {
      LONGRUN_WEBHOOK_ALLOW: '127.0.0.1',
      ...otelEnv(collector, 'trace-test-worker'),
    });
    cleanups.push(() => worker.stop());
  });

  it('puts the submit, each run, the retry link, the webhook and the log lines in the trace the request sent', async () => {
    const traceId = hex(16);
    const callerSpan = hex(8);
    const alpha = httpClient(api.url, KEY_A);
    const submitted = await alpha('POST', '/v1/jobs', {
      headers: { traceparent: `00-${traceId}-${callerSpan}-01` },
      // Fails its first attempt, then succeeds: two runs.
      body: { type: 'flaky', input: { failTimes: 1 }, callback: { url: hooks.url } },
    });
    expect(submitted.status).toBe(202);
    const taskId = submitted.body.taskId as string;
    expect(submitted.body.traceId).toBe(traceId);

    const done = await waitFor(
      async () => {
        const res = await alpha('GET', `/v1/jobs/${taskId}`);
        return res.body.status === 'completed' ? res : undefined;
      },
      { what: 'the task to complete', timeoutMs: 20_000 },
    );
    // The handle names the trace.
    expect(done.body.traceId).toBe(traceId);
    expect(done.body.result).toEqual({ attempt: 2 });

    const delivery = await waitFor(
      async () => hooks.deliveries.find((d) => d.body.includes(taskId)),
      { what: 'the webhook', timeoutMs: 20_000 },
    );
    const sentParent = String(delivery.headers.traceparent);
    expect(sentParent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    const ours = (s: ReceivedSpan) => s.attributes['longrun.task.id'] === taskId;
    const spans = await waitFor(
      async () => {
        const found = collector.spans.filter(ours);
        const runs = found.filter((s) => s.kind === CONSUMER);
        const posts = found.filter((s) => s.kind === CLIENT);
        return runs.length >= 2 && posts.length >= 1 && found.some((s) => s.kind === PRODUCER)
          ? found
          : undefined;
      },
      { what: 'the spans of the task', timeoutMs: 20_000 },
    );
    // One trace: the caller's.
    for (const span of spans) expect(span.traceId).toBe(traceId);

    // The submit: a producer span, a child of the caller's span, from the API's service.
    const creates = spans.filter((s) => s.kind === PRODUCER);
    expect(creates).toHaveLength(1);
    const create = creates[0]!;
    expect(create.parentSpanId).toBe(callerSpan);
    expect(create.service).toBe('trace-test-api');
    expect(create.name).toBe('create tasks.flaky');
    expect(create.attributes).toMatchObject({
      'messaging.system': 'longrun',
      'messaging.operation.type': 'create',
      'messaging.operation.name': 'create',
      'messaging.destination.name': 'tasks.flaky',
      'messaging.message.id': taskId,
      'longrun.job_type': 'flaky',
      'longrun.tenant': 'alpha',
      'longrun.outcome': 'created',
    });

    // Two runs: consumer spans, children of the create, in the worker's service.
    const runs = spans
      .filter((s) => s.kind === CONSUMER)
      .sort(
        (a, b) => Number(a.attributes['longrun.attempt']) - Number(b.attributes['longrun.attempt']),
      );
    expect(runs).toHaveLength(2);
    const [first, retry] = runs as [ReceivedSpan, ReceivedSpan];
    for (const run of runs) {
      expect(run.parentSpanId).toBe(create.spanId);
      expect(run.service).toBe('trace-test-worker');
      expect(run.name).toBe('process tasks.flaky');
      expect(run.attributes).toMatchObject({
        'messaging.system': 'longrun',
        'messaging.operation.type': 'process',
        'messaging.operation.name': 'process',
        'messaging.destination.name': 'tasks.flaky',
        'longrun.job_type': 'flaky',
      });
    }
    expect(first.attributes).toMatchObject({ 'longrun.attempt': 1, 'longrun.outcome': 'retrying' });
    expect(first.status).toBe(ERROR);
    // The queue wait: an attribute of the first run, and the gap after the create.
    expect(typeof first.attributes['longrun.queue_wait_ms']).toBe('number');
    expect(BigInt(first.startTimeUnixNano)).toBeGreaterThanOrEqual(
      BigInt(create.startTimeUnixNano),
    );
    expect(retry.attributes).toMatchObject({
      'longrun.attempt': 2,
      'longrun.outcome': 'completed',
    });
    expect(retry.status).not.toBe(ERROR);
    // The retry is a new span linked to the run it follows.
    expect(retry.links).toHaveLength(1);
    expect(retry.links[0]).toMatchObject({ traceId, spanId: first.spanId });
    expect(first.links).toHaveLength(0);

    // The webhook: a client span under the create, whose own context the receiver was sent.
    const posts = spans.filter((s) => s.kind === CLIENT);
    const post = posts.find((s) => sentParent === `00-${traceId}-${s.spanId}-01`);
    expect(post, `no delivery span sent as ${sentParent}`).toBeDefined();
    expect(post!.parentSpanId).toBe(create.spanId);
    expect(post!.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.response.status_code': 204,
    });

    // The worker's log lines of each run carry that run's trace and span ids.
    await waitFor(
      async () => worker.lines.find((l) => l.includes(taskId) && l.includes('"task completed"')),
      { what: "the runs' log lines" },
    );
    const logged = worker.lines
      .filter((l) => l.startsWith('{') && l.includes(taskId))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const started = logged.filter((l) => l.msg === 'task started');
    expect(started.map((l) => [l.trace_id, l.span_id])).toEqual([
      [traceId, first.spanId],
      [traceId, retry.spanId],
    ]);
    const completed = logged.find((l) => l.msg === 'task completed');
    expect(completed).toMatchObject({ trace_id: traceId, span_id: retry.spanId });
  });

  it('starts a trace of its own for a submit without a traceparent, or with a malformed one', async () => {
    const alpha = httpClient(api.url, KEY_A);
    const sent: Record<string, string>[] = [{}, { traceparent: 'not-a-traceparent' }];
    for (const headers of sent) {
      const res = await alpha('POST', '/v1/jobs', { headers, body: { type: 'echo', input: {} } });
      expect(res.status).toBe(202);
      const traceId = res.body.traceId as string;
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      const create = await waitFor(
        async () =>
          collector.spans.find(
            (s) => s.kind === PRODUCER && s.attributes['longrun.task.id'] === res.body.taskId,
          ),
        { what: 'the create span', timeoutMs: 10_000 },
      );
      expect(create.traceId).toBe(traceId);
      expect(create.parentSpanId).toBe('');
    }
  });
  it('takes the traceparent of an MCP tools/call (_meta, both generations) and of an A2A message (metadata)', async () => {
    const alpha = httpClient(api.url, KEY_A);
    // MCP 2025-11-25, through the official SDK's client: a task-augmented tools/call.
    const transport = new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${KEY_A}` } },
    });
    const client = new Client({ name: 'trace-test', version: '1.0.0' });
    await client.connect(transport);
    cleanups.push(() => client.close());
    const v1Trace = hex(16);
    const v1 = await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'echo',
          arguments: { via: 'mcp-v1' },
          task: { ttl: 60_000 },
          _meta: { traceparent: `00-${v1Trace}-${hex(8)}-01` },
        },
      },
      CreateTaskResultSchema,
    );
    expect((await alpha('GET', `/v1/jobs/${v1.task.taskId}`)).body.traceId).toBe(v1Trace);
    // Tasks V2 (2026-07-28), the stateless framing.
    const mcp = new V2Port({ urls: [`${api.url}/mcp`], apiKey: KEY_A });
    const mcpTrace = hex(16);
    const called = await mcp.send(
      'tools/call',
      { name: 'echo', arguments: { via: 'mcp' } },
      { meta: { traceparent: `00-${mcpTrace}-${hex(8)}-01` } },
    );
    const mcpTask = (called.body.result as { taskId: string }).taskId;
    expect((await alpha('GET', `/v1/jobs/${mcpTask}`)).body.traceId).toBe(mcpTrace);

    const a2aTrace = hex(16);
    const sent = await fetch(`${api.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY_A}`,
        'content-type': 'application/json',
        'a2a-version': '1.0',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: {
            messageId: randomUUID(),
            role: 'ROLE_USER',
            parts: [{ data: { type: 'echo', input: { via: 'a2a' } } }],
            metadata: { traceparent: `00-${a2aTrace}-${hex(8)}-01` },
          },
          configuration: { returnImmediately: true },
        },
      }),
    });
    const answer = (await sent.json()) as { result?: { task?: { id: string } } };
    const a2aTask = answer.result?.task?.id ?? '';
    expect(a2aTask, JSON.stringify(answer)).not.toBe('');
    expect((await alpha('GET', `/v1/jobs/${a2aTask}`)).body.traceId).toBe(a2aTrace);

    for (const [task, trace] of [
      [mcpTask, mcpTrace],
      [a2aTask, a2aTrace],
    ]) {
      const create = await waitFor(
        async () =>
          collector.spans.find(
            (s) => s.kind === PRODUCER && s.attributes['longrun.task.id'] === task,
          ),
        { what: 'the create span', timeoutMs: 10_000 },
      );
      expect(create.traceId).toBe(trace);
    }
  });
});

describe('with the default OTLP protocol (http/protobuf)', () => {
  it('exports the spans as protobuf', async () => {
    const collector = await otlpReceiver();
    cleanups.push(() => collector.close());
    const prefix = uniquePrefix();
    // The worker registers the job types the API takes; it traces nothing here.
    const worker = await startWorker(prefix);
    cleanups.push(() => worker.stop());
    const api = await startApiProcess(registry, {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    const traceId = hex(16);
    const res = await httpClient(api.url, KEY_A)('POST', '/v1/jobs', {
      headers: { traceparent: `00-${traceId}-${hex(8)}-01` },
      body: { type: 'echo', input: {} },
    });
    expect(res.body.traceId).toBe(traceId);
    // The trace id travels as its 16 bytes in a protobuf export.
    const sent = await waitFor(
      async () =>
        collector.requests.find(
          (r) =>
            r.path === '/v1/traces' &&
            r.headers['content-type'] === 'application/x-protobuf' &&
            r.body.includes(Buffer.from(traceId, 'hex')),
        ),
      { what: 'a protobuf export of the trace', timeoutMs: 10_000 },
    );
    expect(sent.body.includes(Buffer.from(res.body.taskId as string))).toBe(true);
  });
});

describe('without the OTEL_* variables', () => {
  it('records nothing and shows no trace id, whatever the request sends', async () => {
    const prefix = uniquePrefix();
    const api = await startApiProcess(registry, {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      OTEL_TRACES_EXPORTER: '',
    });
    const worker = await startWorker(prefix, { OTEL_EXPORTER_OTLP_ENDPOINT: '' });
    cleanups.push(() => worker.stop());
    const alpha = httpClient(api.url, KEY_A);
    const res = await alpha('POST', '/v1/jobs', {
      headers: { traceparent: `00-${hex(16)}-${hex(8)}-01` },
      body: { type: 'echo', input: {} },
    });
    expect(res.status).toBe(202);
    expect(res.body).not.toHaveProperty('traceId');
    const done = await waitFor(
      async () => {
        const got = await alpha('GET', `/v1/jobs/${res.body.taskId}`);
        return got.body.status === 'completed' ? got : undefined;
      },
      { what: 'the task to complete', timeoutMs: 20_000 },
    );
    expect(done.body).not.toHaveProperty('traceId');
    const mine = () => worker.lines.filter((l) => l.includes(res.body.taskId as string));
    await waitFor(async () => mine().find((l) => l.includes('"task completed"')), {
      what: "the run's log lines",
    });
    for (const line of mine()) expect(line).not.toContain('trace_id');
  });
});
