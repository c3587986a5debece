// Noisy neighbour (issue 13): one tenant queues 400 tasks of 200 ms (about 10 s of work for the
// 8 slots of one worker process), then another tenant submits one 10 ms task. How long until
// that one completes, with fair share on (the default) and off (arrival order)? Built API and
// worker processes on a private Redis, loopback only.
//
//   npm run build && node bench/noisy-neighbour.mjs [--backlog=400] [--backlog-ms=200]
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { cleanupAll, onCleanup } from './lib/children.mjs';
import { connect, removePrefix, startPrivateRedis } from './lib/redis.mjs';
import { markdownTable, num } from './lib/report.mjs';
import { startApi, startWorker } from './lib/services.mjs';

const { values: args } = parseArgs({
  options: {
    backlog: { type: 'string', default: '400' },
    'backlog-ms': { type: 'string', default: '200' },
    slots: { type: 'string', default: '8' },
  },
});
const backlog = Number(args.backlog);
const backlogMs = Number(args['backlog-ms']);
const slots = Number(args.slots);
const noisyKey = `noisy-${randomBytes(12).toString('base64url')}`;
const quietKey = `quiet-${randomBytes(12).toString('base64url')}`;

async function submit(base, key, body, path = '/v1/jobs') {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 202 && res.status !== 207) throw new Error(`submit: ${res.status}`);
  return res.json();
}

async function status(base, key, id) {
  const res = await fetch(`${base}/v1/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } });
  return (await res.json()).status;
}

/** One run: the backlog, then the quiet tenant's task; its time to completion. */
async function scenario(redisUrl, fairShare) {
  const prefix = `bench-noisy-${fairShare}-${randomBytes(3).toString('hex')}`;
  const api = await startApi(`api-${fairShare}`, {
    redisUrl,
    prefix,
    apiKeys: `noisy:${noisyKey},quiet:${quietKey}`,
    env: { LONGRUN_FAIR_SHARE: fairShare },
  });
  const worker = await startWorker(`worker-${fairShare}`, {
    redisUrl,
    prefix,
    concurrency: slots,
    logLevel: 'info',
  });
  const ids = [];
  for (let i = 0; i < backlog; i += 100) {
    const tasks = Array.from({ length: Math.min(100, backlog - i) }, () => ({
      type: 'sleep',
      input: { ms: backlogMs },
    }));
    const { results } = await submit(api.base, noisyKey, { tasks }, '/v1/jobs/batch');
    ids.push(...results.map((r) => r.task.taskId));
  }
  await sleep(500); // the backlog is being worked through
  const started = Date.now();
  const { taskId } = await submit(api.base, quietKey, { type: 'sleep', input: { ms: 10 } });
  while ((await status(api.base, quietKey, taskId)) !== 'completed') await sleep(10);
  const waitedMs = Date.now() - started;
  let done = 0;
  for (const id of ids) if ((await status(api.base, noisyKey, id)) === 'completed') done++;
  await worker.child.stop();
  await api.child.stop();
  return { fairShare, waitedMs, done };
}

async function main() {
  const redisUrl = (await startPrivateRedis()).url;
  const redis = connect(redisUrl);
  onCleanup(() => redis.quit());
  onCleanup(async () => {
    for (const p of await redis.keys('bench-noisy-*')) await removePrefix(redis, p.split(':')[0]);
  });
  const rows = [];
  for (const mode of ['off', 'on']) {
    const r = await scenario(redisUrl, mode);
    console.log(`fair share ${mode}: the quiet tenant's task completed in ${num(r.waitedMs)} ms`);
    rows.push([`LONGRUN_FAIR_SHARE=${mode}`, `${num(r.waitedMs)} ms`, `${r.done} of ${backlog}`]);
  }
  console.log(
    `\n${backlog} tasks of ${backlogMs} ms queued by one tenant, ${slots} worker slots; then one 10 ms task of another tenant:\n\n` +
      markdownTable(
        ['', "the other tenant's task completed after", "noisy tenant's tasks done by then"],
        rows,
      ),
  );
}

try {
  await main();
} finally {
  await cleanupAll();
}
