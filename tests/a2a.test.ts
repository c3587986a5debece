/**
 * The A2A v1.0 door, driven by the official client (`@a2a-js/sdk` `ClientFactory.createFromUrl`
 * with the bearer key) against the running service: two API processes on one Redis prefix and
 * the stock worker process. Tasks are created through one replica and read, answered, watched
 * and cancelled through the other, over both bindings (JSON-RPC on one, HTTP+JSON on the other),
 * and are the same tasks `GET /v1/jobs/<id>` shows. Push notifications go to a receiver on
 * 127.0.0.1 (which LONGRUN_WEBHOOK_ALLOW lets the API and the worker reach), sent by the worker's
 * webhook delivery.
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
  StreamResponse,
  TaskState,
  type SendMessageRequest,
  type Task,
  type TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import {
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRedis, taskKeys } from '@longrun/engine';
import { httpClient, waitFor } from './helpers/http.js';
import { startApiProcess, type ApiProcess, type Proc } from './helpers/processes.js';
import { promptReceiver, type PromptReceiver } from './helpers/receivers.js';
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
/** Where push notifications go (127.0.0.1). */
let receiver: PromptReceiver;

const env = () => ({
  REDIS_URL: inject('redisUrl'),
  LONGRUN_PREFIX: prefix,
  LONGRUN_API_KEYS: API_KEYS,
  LONGRUN_WEBHOOK_ALLOW: '127.0.0.1',
});

beforeAll(async () => {
  prefix = uniquePrefix();
  receiver = await promptReceiver();
  cleanups.add(() => receiver.close());
  worker = await startWorker(prefix, { LONGRUN_WEBHOOK_ALLOW: '127.0.0.1' });
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

/** A push notification config for `receiver` (the SDK's defaults: no id, token or auth). */
function pushConfig(fields: Partial<TaskPushNotificationConfig> = {}): TaskPushNotificationConfig {
  return {
    tenant: '',
    id: '',
    taskId: '',
    url: receiver.url,
    token: '',
    authentication: undefined,
    ...fields,
  };
}

const listConfigs = (client: Client, taskId: string) =>
  client.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 10, pageToken: '' });
const getConfig = (client: Client, taskId: string, id: string) =>
  client.getTaskPushNotificationConfig({ tenant: '', taskId, id });
const deleteConfig = (client: Client, taskId: string, id: string) =>
  client.deleteTaskPushNotificationConfig({ tenant: '', taskId, id });

/**
 * The A2A push notifications `receiver` got for task `id`, in arrival order: each body read
 * with the SDK's codec, which finds the task in it (a `StreamResponse`), and its headers.
 */
function pushes(id: string) {
  return receiver.deliveries.flatMap(({ body, headers }) => {
    if (headers['content-type'] !== 'application/a2a+json') return []; // a longrun webhook
    const payload = StreamResponse.fromJSON(JSON.parse(body)).payload;
    return payload?.$case === 'task' && payload.value.id === id
      ? [{ task: payload.value, headers }]
      : [];
  });
}

const pushed = (id: string, state: TaskState) =>
  waitFor(async () => pushes(id).find((p) => p.task.status?.state === state), {
    what: `a push notification of task ${id} in state ${TaskState[state]}`,
    timeoutMs: 20_000,
  });

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
      'durable',
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
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
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

  it('refuses a message without a known type or with invalid input as invalid params, making no task', async () => {
    const since = new Date().toISOString();
    await expect(start(viaOne, { type: 'nope', input: {} })).rejects.toThrow(
      /Unknown job type "nope"/,
    );
    const invalid = start(viaTwo, { type: 'sleep', input: { ms: 'soon' } });
    await expect(invalid).rejects.toBeInstanceOf(RequestMalformedError);
    await expect(invalid).rejects.toThrow(/does not match job type "sleep".*ms/);
    // A message with no parts is not a message: invalid params, and no task (tests/a2a-edges).
    await expect(
      viaOne.sendMessage({ ...send({}), message: { ...send({}).message!, parts: [] } }),
    ).rejects.toBeInstanceOf(RequestMalformedError);
    // A refused start made no task.
    const listed = await viaTwo.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 100,
      pageToken: '',
      historyLength: undefined,
      statusTimestampAfter: since,
      includeArtifacts: false,
    });
    expect(listed.tasks).toEqual([]);
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
  it('a config made on a task gets each status change as it happens, as the A2A task, with its token', async () => {
    // Started 2 s from now, so the config is there before anything happens.
    const body = { type: 'approval', input: { question: 'Push it?' }, delayMs: 2000 };
    const task = await start(viaOne, body, true);
    const created = await viaTwo.createTaskPushNotificationConfig(
      pushConfig({ taskId: task.id, token: 'tok-1' }),
    );
    // No id given: the config's id is the task's.
    expect(created).toMatchObject({
      id: task.id,
      taskId: task.id,
      url: receiver.url,
      token: 'tok-1',
    });

    // The question is pushed while the task waits for it.
    const asked = await pushed(task.id, TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(statusParts(asked.task)).toEqual(statusParts(await get(viaOne, task.id)));
    expect(statusParts(asked.task).text).toBe('Push it?');
    expect(asked.headers['content-type']).toBe('application/a2a+json');
    expect(asked.headers['x-a2a-notification-token']).toBe('tok-1');
    expect(asked.headers['longrun-delivery-id']).toMatch(new RegExp(`^${task.id}_\\d+$`));
    expect(asked.headers).not.toHaveProperty('longrun-signature');
    expect(asked.headers).not.toHaveProperty('authorization');

    await viaTwo.sendMessage(send({ input: { approved: true, comment: 'pushed' } }, { task }));
    const done = await pushed(task.id, TaskState.TASK_STATE_COMPLETED);
    await pushed(task.id, TaskState.TASK_STATE_WORKING); // the answer: working again
    // The completed push is the task GetTask answers, with the result artifact.
    expect(done.task).toEqual(await get(viaOne, task.id));
    expect(result(done.task)).toEqual({ approved: true, comment: 'pushed' });
    // One push per status change: none for the create or the worker taking the task.
    const states = pushes(task.id).map((p) => p.task.status?.state);
    expect(states[0]).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect([...states].sort()).toEqual(
      [
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_WORKING,
        TaskState.TASK_STATE_COMPLETED,
      ].sort(),
    );
    expect(new Set(pushes(task.id).map((p) => p.headers['longrun-delivery-id'])).size).toBe(3);
  }, 40_000);

  it('a config given at start (SendMessage configuration) sends its authentication; get, list, delete', async () => {
    const message = send({ type: 'echo', input: { pushed: 'at start' } });
    message.configuration!.taskPushNotificationConfig = pushConfig({
      authentication: { scheme: 'Bearer', credentials: 'cred-2' },
    });
    const task = (await viaOne.sendMessage(message)) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const done = await pushed(task.id, TaskState.TASK_STATE_COMPLETED);
    expect(done.headers.authorization).toBe('Bearer cred-2');
    expect(done.headers).not.toHaveProperty('x-a2a-notification-token');
    expect(result(done.task)).toEqual({ pushed: 'at start' });

    // The config, through either replica and binding.
    const expected = {
      id: task.id,
      taskId: task.id,
      url: receiver.url,
      authentication: { scheme: 'Bearer', credentials: 'cred-2' },
    };
    expect((await listConfigs(viaOne, task.id)).configs).toEqual([
      expect.objectContaining(expected),
    ]);
    expect(await getConfig(viaTwo, task.id, task.id)).toMatchObject(expected);
    await expect(getConfig(viaTwo, task.id, 'another')).rejects.toBeInstanceOf(TaskNotFoundError);

    // Deleted, it is gone; deleting it again is not an error.
    await deleteConfig(viaTwo, task.id, task.id);
    expect((await listConfigs(viaOne, task.id)).configs).toEqual([]);
    expect((await listConfigs(viaTwo, task.id)).configs).toEqual([]);
    await deleteConfig(viaOne, task.id, task.id);
    await expect(getConfig(viaOne, task.id, task.id)).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('a task keeps several configs by id, across replicas: each is sent every change; the same id replaces; a deleted one is sent nothing more', async () => {
    const body = { type: 'approval', input: { question: 'Stop pushing?' }, delayMs: 1500 };
    const task = await start(viaTwo, body, true);
    // Two configs, made on different replicas (one binding each): both kept, in Redis.
    await viaOne.createTaskPushNotificationConfig(
      pushConfig({ taskId: task.id, id: 'first', token: 'a' }),
    );
    await viaTwo.createTaskPushNotificationConfig(
      pushConfig({ taskId: task.id, id: 'second', token: 's' }),
    );
    const replaced = await viaTwo.createTaskPushNotificationConfig(
      pushConfig({ taskId: task.id, id: 'first', token: 'b' }),
    );
    expect(replaced).toMatchObject({ id: 'first', token: 'b' });
    for (const client of [viaOne, viaTwo]) {
      expect((await listConfigs(client, task.id)).configs).toEqual([
        expect.objectContaining({ id: 'first', token: 'b' }),
        expect.objectContaining({ id: 'second', token: 's' }),
      ]);
      expect(await getConfig(client, task.id, 'second')).toMatchObject({ id: 'second' });
    }

    // The question goes to both configs (each with its own token).
    const tokens = () =>
      pushes(task.id)
        .filter((p) => p.task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED)
        .map((p) => p.headers['x-a2a-notification-token'])
        .sort();
    await waitFor(async () => (tokens().length >= 2 ? true : undefined), {
      what: 'the question pushed to both configs',
    });
    expect(tokens()).toEqual(['b', 's']);

    // Deleting one (on the other replica) leaves the other: only it is sent the end.
    await deleteConfig(viaTwo, task.id, 'first');
    await expect(getConfig(viaOne, task.id, 'first')).rejects.toBeInstanceOf(TaskNotFoundError);
    expect((await listConfigs(viaOne, task.id)).configs.map((c) => c.id)).toEqual(['second']);
    const answered = await viaOne.sendMessage(send({ input: { approved: false } }, { task }));
    expect('id' in answered && answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const done = await pushed(task.id, TaskState.TASK_STATE_COMPLETED);
    expect(done.headers['x-a2a-notification-token']).toBe('s');
    await new Promise((r) => setTimeout(r, 1500));
    const ends = pushes(task.id).filter(
      (p) => p.task.status?.state === TaskState.TASK_STATE_COMPLETED,
    );
    expect(ends.map((p) => p.headers['x-a2a-notification-token'])).toEqual(['s']);
  }, 30_000);

  it('a task with a longrun callback takes no config; a start may not give both', async () => {
    const task = await start(
      viaOne,
      { type: 'sleep', input: { ms: 60_000 }, callback: { url: receiver.url } },
      true,
    );
    await expect(
      viaOne.createTaskPushNotificationConfig(pushConfig({ taskId: task.id })),
    ).rejects.toBeInstanceOf(UnsupportedOperationError);
    expect((await listConfigs(viaTwo, task.id)).configs).toEqual([]);
    await deleteConfig(viaTwo, task.id, task.id); // not a config: left alone
    await cancel(viaOne, task.id);
    // The callback still gets longrun's webhook.
    await waitFor(
      async () =>
        receiver.deliveries.some(
          (d) => d.body.includes(task.id) && d.body.includes('"status":"cancelled"'),
        ) || undefined,
      { what: 'the cancelled webhook' },
    );

    const both = send({ type: 'echo', input: {}, callback: { url: receiver.url } });
    both.configuration!.taskPushNotificationConfig = pushConfig();
    const rejected = viaTwo.sendMessage(both);
    await expect(rejected).rejects.toBeInstanceOf(RequestMalformedError);
    await expect(rejected).rejects.toThrow(/a callback or a push notification config/);
  });

  it('a private or loopback URL is refused when the config is made, before any connection', async () => {
    // A replica with the default allow list (none), and a receiver it may not reach.
    const strict = await startApiProcess(cleanups, { ...env(), LONGRUN_WEBHOOK_ALLOW: '' });
    const client = await a2aClient(strict.url, KEY_A, 'HTTP+JSON');
    const loopback = await promptReceiver({ host: '127.0.0.2' });
    cleanups.add(() => loopback.close());
    const task = await start(client, { type: 'sleep', input: { ms: 60_000 } }, true);
    for (const url of [
      'http://10.0.0.1/',
      'http://169.254.169.254/latest',
      'http://[::1]:9/hook',
      'http://localhost:9/hook',
      loopback.url,
      'ftp://example.com/hook',
    ]) {
      await expect(
        client.createTaskPushNotificationConfig(pushConfig({ taskId: task.id, url })),
        url,
      ).rejects.toBeInstanceOf(RequestMalformedError);
    }
    expect((await listConfigs(client, task.id)).configs).toEqual([]);
    // Given at start, it refuses the start: no task is made.
    const message = send({ type: 'echo', input: {} });
    message.configuration!.taskPushNotificationConfig = pushConfig({ url: 'http://10.0.0.1/' });
    const rejected = client.sendMessage(message);
    await expect(rejected).rejects.toBeInstanceOf(RequestMalformedError);
    await expect(rejected).rejects.toThrow(/push notification URL is not allowed/);
    await cancel(client, task.id);
    expect(loopback.connections).toBe(0);
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

  it('another tenant’s task has no push notification configs to make, read or delete', async () => {
    const task = await start(viaOne, { type: 'sleep', input: { ms: 60_000 } }, true);
    await viaOne.createTaskPushNotificationConfig(pushConfig({ taskId: task.id, token: 'mine' }));
    for (const id of [task.id, randomUUID()]) {
      const config = pushConfig({ taskId: id, token: 'theirs' });
      await expect(beta.createTaskPushNotificationConfig(config)).rejects.toBeInstanceOf(
        TaskNotFoundError,
      );
      await expect(getConfig(beta, id, id)).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(listConfigs(beta, id)).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(deleteConfig(beta, id, id)).rejects.toBeInstanceOf(TaskNotFoundError);
    }
    expect(await getConfig(viaTwo, task.id, task.id)).toMatchObject({ token: 'mine' });
    await cancel(viaTwo, task.id);
    const cancelled = await pushed(task.id, TaskState.TASK_STATE_CANCELED);
    expect(cancelled.headers['x-a2a-notification-token']).toBe('mine');
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
