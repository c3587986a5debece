import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type LocalCluster } from './helpers/cluster.js';
import { httpClient, waitFor } from './helpers/http.js';
import { runApp, startApp, type Proc } from './helpers/processes.js';
import { API_KEYS, KEY_A } from './helpers/service.js';
import { readSse } from './helpers/sse.js';

const procs: Proc[] = [];
let cluster: LocalCluster;
let nodes: string;
let http: ReturnType<typeof httpClient>;
let apiUrl: string;

beforeAll(async () => {
  cluster = await startCluster(3);
  nodes = cluster.nodes;
  const env = {
    LONGRUN_REDIS_CLUSTER_NODES: nodes,
    LONGRUN_PREFIX: '{lrtest}',
    LONGRUN_API_KEYS: API_KEYS,
    LONGRUN_POLL_INTERVAL_MS: '500',
    PORT: '0',
    HOST: '127.0.0.1',
  };
  const api = await startApp('api', env);
  procs.push(api);
  for (let i = 0; i < 2; i++)
    procs.push(await startApp('worker', { ...env, LONGRUN_METRICS_PORT: '0' }));
  apiUrl = `http://127.0.0.1:${api.ready.port as number}`;
  http = httpClient(apiUrl, KEY_A);
}, 60_000);

afterAll(async () => {
  for (const p of procs) await p.stop();
  await cluster?.stop();
});

describe('on a 3-primary Redis Cluster', () => {
  it('refuses a prefix without a hash tag', async () => {
    const { code, output } = await runApp('worker', {
      LONGRUN_REDIS_CLUSTER_NODES: nodes,
      LONGRUN_PREFIX: 'plain',
    });
    expect(code).toBe(1);
    expect(output).toMatch(/LONGRUN_PREFIX: must contain a \{hash tag\}/);
  });

  it('runs the whole task lifecycle', async () => {
    const echo = await http('POST', '/v1/jobs', {
      body: { type: 'echo', input: { on: 'cluster' } },
    });
    expect(echo.status, echo.text).toBe(202);
    const done = await http('GET', `/v1/jobs/${echo.body.taskId}/result?wait=15`);
    expect(done.body).toMatchObject({ status: 'completed', result: { on: 'cluster' } });

    const failed = (
      await http('POST', '/v1/jobs', { body: { type: 'fail', input: { message: 'x' } } })
    ).body.taskId;
    expect((await http('GET', `/v1/jobs/${failed}/result?wait=15`)).body.status).toBe('failed');

    const approval = (
      await http('POST', '/v1/jobs', { body: { type: 'approval', input: { question: 'q' } } })
    ).body.taskId;
    await waitFor(
      async () => (await http('GET', `/v1/jobs/${approval}`)).body.status === 'input_required',
    );
    expect(
      (await http('POST', `/v1/jobs/${approval}/input`, { body: { input: { approved: true } } }))
        .status,
    ).toBe(200);
    expect((await http('GET', `/v1/jobs/${approval}/result?wait=15`)).body.result).toEqual({
      approved: true,
    });

    const sleep = (
      await http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 30_000 } } })
    ).body.taskId;
    await waitFor(
      async () => (await http('GET', `/v1/jobs/${sleep}`)).body.statusMessage === 'running',
    );
    expect((await http('POST', `/v1/jobs/${sleep}/cancel`)).body.status).toBe('cancelled');
    await waitFor(
      async () =>
        procs
          .slice(1)
          .some((w) =>
            w.lines.some((l) => l.includes(sleep) && l.includes('aborted running handler')),
          ),
      {
        what: 'a worker to abort the handler',
      },
    );

    const streamed = (
      await http('POST', '/v1/jobs', { body: { type: 'sleep', input: { ms: 1200 } } })
    ).body.taskId;
    const sse = await readSse(`${apiUrl}/v1/jobs/${streamed}/events`, { key: KEY_A });
    expect(JSON.parse(sse.events.at(-1)!.data).status).toBe('completed');

    const list = await http('GET', '/v1/jobs?limit=100');
    expect(list.body.tasks.map((t: { taskId: string }) => t.taskId)).toEqual(
      expect.arrayContaining([echo.body.taskId, failed, approval, sleep, streamed]),
    );
    expect((await http('DELETE', `/v1/jobs/${echo.body.taskId}`)).status).toBe(204);
    const metrics = (await http('GET', '/metrics')).text;
    expect(metrics).toContain('longrun_redis_up 1');
  });
});
