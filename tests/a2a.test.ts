/**
 * The A2A v1.0 door, driven by the official client (`@a2a-js/sdk` `ClientFactory.createFromUrl`
 * with the bearer key) against the running service: two API processes on one Redis prefix and
 * the stock worker process. Tasks are created through one replica and read, answered, watched
 * and cancelled through the other, over both bindings (JSON-RPC on one, HTTP+JSON on the other),
 * and are the same tasks `GET /v1/jobs/<id>` shows.
 */
import { randomUUID } from 'node:crypto';
import {
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import {
  Role,
  TaskState,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import {
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRedis, taskKeys } from '@longrun/engine';
import { httpClient, waitFor } from './helpers/http.js';
import { startApiProcess, type ApiProcess, type Proc } from './helpers/processes.js';
import { API_KEYS, KEY_A, KEY_B, startWorker, uniquePrefix } from './helpers/service.js';

const cleanups = new Set<() => unknown>();
let prefix: string;
let one: ApiProcess;
let two: ApiProcess;
let worker: Proc;
/** Tenant alpha through replica one (JSON-RPC) and replica two (HTTP+JSON). */
let viaOne: Client;
let viaTwo: Client;
/** Tenant beta, through replica two. */
let beta: Client;

const env = () => ({
  REDIS_URL: inject('redisUrl'),
  LONGRUN_PREFIX: prefix,
  LONGRUN_API_KEYS: API_KEYS,
});

beforeAll(async () => {
  prefix = uniquePrefix();
  worker = await startWorker(prefix);
  cleanups.add(() => worker.stop());
  [one, two] = await Promise.all([
    startApiProcess(cleanups, env()),
    startApiProcess(cleanups, env()),
  ]);
  viaOne = await a2aClient(one.url, KEY_A, 'JSONRPC');
  viaTwo = await a2aClient(two.url, KEY_A, 'HTTP+JSON');
  beta = await a2aClient(two.url, KEY_B, 'JSONRPC');
}, 60_000);

afterAll(async () => {
  for (const fn of [...cleanups].reverse()) await fn();
});

/** The official client for one replica: the card from `url`, the bearer key on every call. */
async function a2aClient(url: string, key: string, binding: 'JSONRPC' | 'HTTP+JSON') {
  const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
    headers: async () => ({ Authorization: `Bearer ${key}` }),
    shouldRetryWithHeaders: async () => undefined,
  });
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        new JsonRpcTransportFactory({ fetchImpl }),
        new RestTransportFactory({ fetchImpl }),
      ],
      preferredTransports: [binding],
    }),
  );
  return factory.createFromUrl(url);
}

/** A message carrying one data part; on `task`, a follow-up on it. */
function send(
  data: unknown,
  opts: { task?: Task; returnImmediately?: boolean; messageId?: string } = {},
): SendMessageRequest {
  return {
    tenant: '',
    message: {
      messageId: opts.messageId ?? randomUUID(),
      contextId: opts.task?.contextId ?? '',
      taskId: opts.task?.id ?? '',
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: 'data', value: data },
          metadata: undefined,
          filename: '',
          mediaType: 'application/json',
        },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: opts.returnImmediately ?? false,
    },
    metadata: undefined,
  };
}

async function start(client: Client, data: unknown, returnImmediately = false): Promise<Task> {
  const result = await client.sendMessage(send(data, { returnImmediately }));
  if (!('id' in result)) throw new Error(`expected a task, got ${JSON.stringify(result)}`);
  return result;
}

const get = (client: Client, id: string) =>
  client.getTask({ tenant: '', id, historyLength: undefined });
const cancel = (client: Client, id: string) =>
  client.cancelTask({ tenant: '', id, metadata: undefined });
const subscribe = (client: Client, id: string) => client.resubscribeTask({ tenant: '', id });

/** The texts and data of a task's status message. */
function statusParts(task: Task) {
  const parts = task.status?.message?.parts ?? [];
  return {
    text: parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])).join('\n'),
    data: parts.flatMap((p) => (p.content?.$case === 'data' ? [p.content.value as unknown] : [])),
  };
}

/** The value of the `result` artifact's data part. */
function result(task: Task): unknown {
  const artifact = task.artifacts.find((a) => a.name === 'result');
  const part = artifact?.parts[0]?.content;
  return part?.$case === 'data' ? part.value : undefined;
}

const untilState = (client: Client, id: string, state: TaskState) =>
  waitFor(async () => ((await get(client, id)).status?.state === state ? true : undefined), {
    what: `task ${id} in state ${TaskState[state]}`,
    timeoutMs: 20_000,
  });

/** Collects a stream's events until it ends. */
async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const stateOf = (event: StreamResponse) =>
  event.payload?.$case === 'task' || event.payload?.$case === 'statusUpdate'
    ? (event.payload.$case === 'task' ? event.payload.value : event.payload.value).status?.state
    : undefined;

describe('the Agent Card', () => {
  it('is served without a key, with a skill per job type and the bearer scheme', async () => {
    const card = await waitFor(
      async () => {
        const res = await fetch(`${one.url}/.well-known/agent-card.json`);
        expect(res.status).toBe(200);
        const body = (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the card's JSON
        return body.skills?.some((s: { id: string }) => s.id === 'approval') ? body : undefined;
      },
      { what: 'the worker’s types in the card' },
    );
    expect(card.skills.map((s: { id: string }) => s.id).sort()).toEqual([
      'approval',
      'echo',
      'fail',
      'flaky',
      'sleep',
    ]);
    // AgentCard.toJSON: the oneof by its field name, the bindings as absolute URLs of this replica.
    expect(card.securitySchemes).toEqual({
      bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: 'Bearer' }) },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: {} } }]);
    expect(card.supportedInterfaces).toEqual([
      { url: `${one.url}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: `${one.url}/a2a/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    ]);
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: false });
  });

  it('everything else under /a2a needs the key', async () => {
    const anonymous = httpClient(one.url);
    for (const [method, path] of [
      ['POST', '/a2a/jsonrpc'],
      ['GET', `/a2a/rest/tasks/${randomUUID()}`],
      ['GET', '/a2a/elsewhere'],
    ] as const) {
      const res = await anonymous(method, path, { body: method === 'POST' ? {} : undefined });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    const wrong = await a2aClient(one.url, 'not-a-key-at-all-xxxxxxxx', 'JSONRPC');
    await expect(get(wrong, randomUUID())).rejects.toThrow();
  });
});

describe('tasks through two replicas', () => {
  it('send completes a task with its result as the artifact `result`; the other replica and GET /v1/jobs see it', async () => {
    const task = await start(viaOne, { type: 'echo', input: { hello: 'a2a' } });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts).toHaveLength(1);
    expect(result(task)).toEqual({ hello: 'a2a' });
    expect(task.contextId).toBe(task.id);

    const again = await get(viaTwo, task.id);
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(result(again)).toEqual({ hello: 'a2a' });
    const http = await httpClient(two.url, KEY_A)('GET', `/v1/jobs/${task.id}`);
    expect(http.body).toMatchObject({
      taskId: task.id,
      status: 'completed',
      result: { hello: 'a2a' },
    });
  });

  it('the approval round trip: asked on one replica, watched and answered across both', async () => {
    const task = await start(viaOne, { type: 'approval', input: { question: 'Ship it?' } }, true);
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(
      task.status?.state,
    );
    // Replica two streams the task through its input request to the end.
    const watched = collect(subscribe(viaTwo, task.id));
    await untilState(viaTwo, task.id, TaskState.TASK_STATE_INPUT_REQUIRED);
    const asking = await get(viaTwo, task.id);
    const { text, data } = statusParts(asking);
    expect(text).toBe('Ship it?');
    expect(data).toEqual([
      {
        inputRequest: {
          message: 'Ship it?',
          schema: expect.objectContaining({ required: ['approved'] }),
        },
      },
    ]);
    expect((await httpClient(one.url, KEY_A)('GET', `/v1/jobs/${task.id}`)).body.status).toBe(
      'input_required',
    );

    // An answer the question's schema refuses: an error, and the task still waits.
    await expect(
      viaTwo.sendMessage(send({ input: { approved: 'yes' } }, { task: asking })),
    ).rejects.toBeInstanceOf(RequestMalformedError);
    expect((await get(viaOne, task.id)).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    // Answered on replica one (blocking): it returns the completed task.
    const answered = await viaOne.sendMessage(
      send({ input: { approved: true, comment: 'go' } }, { task: asking }),
    );
    expect('id' in answered && answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(result(answered as Task)).toEqual({ approved: true, comment: 'go' });

    const events = await watched;
    expect(events[0]?.payload?.$case).toBe('task');
    const states = events.map(stateOf).filter((s) => s !== undefined);
    expect(states).toContain(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    const artifact = events.find((e) => e.payload?.$case === 'artifactUpdate');
    expect(
      artifact?.payload?.$case === 'artifactUpdate' && artifact.payload.value.artifact?.name,
    ).toBe('result');
    // A message to a finished task is refused.
    await expect(
      viaTwo.sendMessage(send({ input: { approved: false } }, { task: asking })),
    ).rejects.toBeInstanceOf(UnsupportedOperationError);
  }, 60_000);

  it('cancel on one replica stops a task started on the other; a second cancel is not possible', async () => {
    const task = await start(viaTwo, { type: 'sleep', input: { ms: 60_000 } }, true);
    const cancelled = await cancel(viaOne, task.id);
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await get(viaTwo, task.id)).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(cancel(viaTwo, task.id)).rejects.toBeInstanceOf(TaskNotCancelableError);
    const http = await httpClient(one.url, KEY_A)('GET', `/v1/jobs/${task.id}`);
    expect(http.body.status).toBe('cancelled');
  });

  it('cancel of a task waiting for input reaches the engine (the SDK’s own store would not)', async () => {
    const task = await start(viaOne, { type: 'approval', input: { question: 'Stop?' } }, true);
    await untilState(viaOne, task.id, TaskState.TASK_STATE_INPUT_REQUIRED);
    expect((await cancel(viaTwo, task.id)).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const http = await httpClient(one.url, KEY_A)('GET', `/v1/jobs/${task.id}`);
    expect(http.body.status).toBe('cancelled');
    await expect(
      viaOne.sendMessage(send({ input: { approved: true } }, { task })),
    ).rejects.toBeInstanceOf(UnsupportedOperationError);
  });

  it('a failing job is TASK_STATE_FAILED with its message', async () => {
    const task = await start(viaTwo, { type: 'fail', input: { message: 'disk on fire' } });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(statusParts(task).text).toBe('disk on fire');
    expect((await get(viaOne, task.id)).status?.state).toBe(TaskState.TASK_STATE_FAILED);
  });

  it('a streamed send reports progress, then the result artifact and the completed status', async () => {
    const events = await collect(
      viaTwo.sendMessageStream(send({ type: 'sleep', input: { ms: 2500 } })),
    );
    expect(events[0]?.payload?.$case).toBe('task');
    const states = events.map(stateOf);
    expect(states).toContain(TaskState.TASK_STATE_WORKING);
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    const kinds = events.map((e) => e.payload?.$case);
    expect(kinds.slice(-2)).toEqual(['artifactUpdate', 'statusUpdate']);
    const progress = events.some((e) =>
      e.payload?.$case === 'statusUpdate'
        ? (e.payload.value.status?.message?.parts ?? []).some(
            (p) => p.content?.$case === 'data' && 'progress' in (p.content.value as object),
          )
        : false,
    );
    expect(progress).toBe(true);
  }, 30_000);

  it('rejects a message without a known type or with invalid input, with the validation message', async () => {
    const unknown = await start(viaOne, { type: 'nope', input: {} });
    expect(unknown.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(statusParts(unknown).text).toMatch(/Unknown job type "nope"/);
    const invalid = await start(viaTwo, { type: 'sleep', input: { ms: 'soon' } });
    expect(invalid.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(statusParts(invalid).text).toMatch(/does not match job type "sleep".*ms/);
    const noData = await viaOne.sendMessage({
      ...send({}),
      message: { ...send({}).message!, parts: [] },
    });
    expect('id' in noData && noData.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    // A rejected start made no task.
    await expect(get(viaOne, invalid.id)).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('the same message sent twice is one task (its messageId is the idempotency key)', async () => {
    const messageId = randomUUID();
    const first = await viaOne.sendMessage(send({ type: 'echo', input: { n: 1 } }, { messageId }));
    const again = await viaTwo.sendMessage(send({ type: 'echo', input: { n: 1 } }, { messageId }));
    expect('id' in again && again.id).toBe('id' in first && first.id);
  });

  it('lists the tenant’s tasks, filtered by state', async () => {
    const task = await start(viaOne, { type: 'echo', input: { listed: true } });
    const all = await viaTwo.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_COMPLETED,
      pageSize: 100,
      pageToken: '',
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    });
    expect(all.tasks.map((t) => t.id)).toContain(task.id);
    expect(all.tasks.every((t) => t.status?.state === TaskState.TASK_STATE_COMPLETED)).toBe(true);
    expect(result(all.tasks.find((t) => t.id === task.id) as Task)).toEqual({ listed: true });
  });
});

describe('push notifications', () => {
  it('are not offered: the card says so, and configs are refused', async () => {
    const task = await start(viaOne, { type: 'echo', input: {} });
    await expect(
      viaOne.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'any' }),
    ).rejects.toBeInstanceOf(PushNotificationNotSupportedError);
    const withConfig = send({ type: 'echo', input: {} });
    withConfig.configuration!.taskPushNotificationConfig = {
      tenant: '',
      id: '',
      taskId: '',
      url: 'https://hooks.example.com/a2a',
      token: 't',
      authentication: undefined,
    };
    await expect(viaTwo.sendMessage(withConfig)).rejects.toBeInstanceOf(
      PushNotificationNotSupportedError,
    );
  });
});

describe('nothing stays behind in a replica', () => {
  it('a blocking send or a stream whose client goes away stops following the task', async () => {
    const redis = createRedis(inject('redisUrl'), 'producer');
    cleanups.add(() => redis.disconnect());
    const channel = (id: string) => taskKeys(prefix).eventsChannel + id;
    const followers = async (id: string) =>
      ((await redis.pubsub('NUMSUB', channel(id))) as [string, number])[1];
    const body = { type: 'sleep', input: { ms: 60_000 } };
    const messageId = randomUUID();
    const leaving = new AbortController();
    // A blocking send on replica one, and the same message (so the same task) on replica two.
    const blocking = viaOne.sendMessage(send(body, { messageId }), { signal: leaving.signal });
    const again = await viaTwo.sendMessage(send(body, { messageId, returnImmediately: true }));
    const id = 'id' in again ? again.id : '';
    const stream = subscribe(viaTwo, id)[Symbol.asyncIterator]();
    expect((await stream.next()).value?.payload?.$case).toBe('task');
    await waitFor(async () => (await followers(id)) === 2, { what: 'both replicas following' });
    leaving.abort();
    await expect(blocking).rejects.toThrow();
    await stream.return(undefined);
    await waitFor(async () => (await followers(id)) === 0, { what: 'no replica following' });
    await cancel(viaOne, id);
  });
});

describe('tenants', () => {
  it('another tenant’s task is not found, exactly like an unknown id', async () => {
    const task = await start(viaOne, { type: 'sleep', input: { ms: 60_000 } }, true);
    for (const id of [task.id, randomUUID()]) {
      await expect(get(beta, id)).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(cancel(beta, id)).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(collect(subscribe(beta, id))).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(
        beta.sendMessage(
          send({ input: { approved: true } }, { task: { ...task, id, contextId: id } }),
        ),
      ).rejects.toBeInstanceOf(TaskNotFoundError);
    }
    const listed = await beta.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 100,
      pageToken: '',
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    });
    expect(listed.tasks.map((t) => t.id)).not.toContain(task.id);
    // Still there for its owner, and still running.
    expect((await get(viaTwo, task.id)).status?.state).not.toBe(TaskState.TASK_STATE_CANCELED);
    await cancel(viaTwo, task.id);
  });
});

describe('restarts', () => {
  it('a task outlives the replica that started it', async () => {
    const task = await start(viaOne, { type: 'echo', input: { kept: true } });
    await one.stop();
    const three = await startApiProcess(cleanups, env());
    const viaThree = await a2aClient(three.url, KEY_A, 'JSONRPC');
    expect(result(await get(viaThree, task.id))).toEqual({ kept: true });
  });
});
