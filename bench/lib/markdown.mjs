// docs/BENCHMARKS.md: the table, how it was measured, per-round details, the CPU profiles, the
// comparison with bench/baseline.json, the hand-written analysis (bench/analysis.md) and the
// console output of the run.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { render } from '../profile-summary.mjs';
import { C, root, SUBMIT_BODY } from './config.mjs';
import { say } from './context.mjs';
import { perRequest } from './http-figures.mjs';
import { tripsText } from './monitor.mjs';
import { httpWorkerMarkdown } from './http-worker.mjs';
import { proxyMarkdown } from './proxy.mjs';
import { figuresMarkdown, markdownTable, ms, num, ratio } from './report.mjs';

const load = (xs) => xs.map((x) => x.toFixed(2)).join(' ');
const redisPart = (r) => (Number.isFinite(r.redisUs) ? ` (Redis ${num(r.redisUs)})` : '');
const lat = (r) =>
  `${num(r.rps)} req/s · p50 ${r.latency.p50} · p99 ${r.latency.p99} ms · CPU ${num(r.cpuUs)} µs${redisPart(r)}`;
const job = (r) =>
  `${num(r.rate)} jobs/s (${r.seconds.toFixed(2)} s) · CPU ${num(r.cpuUs)} µs/job${redisPart(r)}`;
const calls = (r) =>
  Object.entries(r.calls)
    .sort((a, b) => b[1] - a[1])
    .map(([c, n]) => `${c} ${(n / (r.sent || r.total)).toFixed(2)}`)
    .join(', ');
const latencyCell = (r) => `${ms(r.p50)} / ${ms(r.p99)}`;

function roundsTable(title, columns) {
  const n = columns[0][1].length;
  return `${title}\n\n${markdownTable(
    ['round', ...columns.map(([name]) => name)],
    Array.from({ length: n }, (_, i) => [String(i + 1), ...columns.map(([, xs, f]) => f(xs[i]))]),
  )}`;
}

function howToRun() {
  return [
    '## How to run',
    '',
    '```sh',
    'npm run bench                      # = npm run build && node bench/run.mjs  (about 8 min on 2 cores)',
    'node bench/run.mjs --quick         # short runs, to try the script (numbers not meaningful)',
    'node bench/run.mjs --stored=100000 # size of the big store (default 100 000 if it fits the time budget, else 20 000)',
    'node bench/run.mjs --redis-url=redis://127.0.0.1:6379  # an existing Redis (default: a private redis-server)',
    'node bench/run.mjs --save-baseline # keep this run as bench/baseline.json, the "before" of the comparison',
    'node bench/run.mjs --skip-profile --no-docs --json=out.json   # no profiles, no docs, results as JSON',
    "node bench/profile-summary.mjs <file.cpuprofile>      # summarise a CPU profile (--keep-profiles keeps the run's)",
    'node bench/ab.mjs --b-import=bench/experiments/autopipeline.mjs  # price an idea: API A vs API B (a node --import preload), alternating',
    'node bench/profile-worker.mjs [--no-profile] [--import=FILE]       # one worker draining 20 000 jobs: profile, or drain rate and CPU per job',
    'BENCH_BULLMQ_PROXY=/path/to/bullmq-proxy npm run bench        # adds figure 8, bullmq-proxy side by side (skipped when unset)',
    'node bench/http-worker.mjs         # figure 9 alone: one HTTP worker (Python) against one SDK worker, and idle long polls',
    'BENCH_BULLMQ_PROXY=/path/to/bullmq-proxy node bench/run.mjs --only=proxy  # figure 8 alone (about 2 min; no docs written)',
    '```',
    '',
    'Figure 8 needs a checkout of [bullmq-proxy](https://github.com/taskforcesh/bullmq-proxy) outside this repository, its dependencies installed with the pinned Bun: `git clone https://github.com/taskforcesh/bullmq-proxy /path/to/bullmq-proxy && (cd /path/to/bullmq-proxy && <this repo>/tools/bun/node_modules/.bin/bun install --production --ignore-scripts)`. The benchmark runs its `src/index.ts` on that Bun with `PORT`, `REDIS_HOST`, `REDIS_PORT`, `AUTH_TOKENS` and `QUEUE_PREFIX` (a fresh prefix, removed at the end) on the same private Redis.',
    '',
    'Every part is a process of its own: the built API (`apps/api/dist/main.js`) and workers (`apps/worker/dist/main.js`), the bare Express 5 app (`bench/bare-app.mjs`), the raw BullMQ worker (`bench/raw-worker.mjs`), raw adds (`bench/raw-add.mjs`) and the load generators: autocannon through its API in `bench/load-child.mjs` (throughput at 50 connections; its latencies are whole milliseconds) and `bench/latency-child.mjs` (one connection, one request at a time, sub-millisecond). All traffic goes to 127.0.0.1. Figures are medians over the rounds; each ratio is the median of per-round ratios, each pair measured back to back, because the machine is shared: **the ratios are what count**, the absolute numbers only describe this machine at that moment. CPU time per request (user + system of the process, from `/proc`) is printed beside throughput: unlike req/s it hardly depends on how much of the machine other processes take, so its ratio is the steadier one.',
    '',
    'Settings: API with `LOG_LEVEL=warn LONGRUN_RATE_LIMIT_RPS=0 LONGRUN_MAX_OPEN_TASKS=0 NODE_ENV=production` on a free loopback port (ready when `/readyz` answers: at `warn` there is no "api ready" line), workers with `LONGRUN_WORKER_CONCURRENCY=100 LOG_LEVEL=warn` (one extra round at the default `info`). Redis is a private `redis-server` started for the run (no persistence, `noeviction`) so that `INFO commandstats`, `used_memory` and its CPU time see only this run; with `--redis-url` other clients blur those three. Keys live under fresh prefixes `bench-<id>-*` and are removed at the end with SCAN + UNLINK; children are killed on exit and on Ctrl-C.',
  ].join('\n');
}

function whatEachFigureIs(d, c) {
  return [
    '## What each figure is',
    '',
    `1. **Submit**: \`POST /v1/jobs\` with \`${SUBMIT_BODY}\`, 50 connections, ${c.loadS} s per round, against the bare app's canned 202 + handle on the same route.`,
    `2. **Poll**: \`GET /v1/jobs/<id>\` over ids drawn at random from the stored tasks (${num(d.storedSmall)}, then ${num(d.storedBig)}; all real tasks submitted through the API), 50 connections, against the bare app's canned handle. Commands per poll = the \`INFO commandstats\` delta over the API's run ÷ requests sent (nothing else uses this Redis meanwhile); the 1-connection latency comes from \`latency-child.mjs\`.`,
    `3. **Process**: ${num(c.processJobs)} echo jobs submitted through the API while the queue is paused; then the queue is resumed and the time until nothing waits or runs is measured. Every newly started set of workers first drains a warm-up batch of ${num(c.processJobs / 4)} jobs (not counted), so that the JIT has compiled the hot paths. The raw BullMQ Worker (concurrency 100, returns its input) drains as many jobs, added with longrun's job options (own id, one attempt, removed when finished) and carrying the echo input. CPU per job: the worker processes, and Redis.`,
    `4. **Raw ceilings**: BullMQ \`queue.add\` with 100 in flight (${num(c.rawAdds)} adds, longrun's job options), and \`redis-benchmark -t set -n ${c.setRequests} -q\` on the same Redis.`,
    `5. **Scrape**: \`GET /metrics\`, one connection, ${c.scrapeS} s per round, on the API whose prefix holds ${num(d.storedBig)} tasks (their jobs waiting) and, alternating, on a second API process whose prefix holds none.`,
    `6. **Memory**: \`used_memory\` before and after ${num(c.memoryTasks)} echo tasks were submitted and completed (kept until their ttl), ÷ tasks; the same for raw BullMQ jobs with the same payload and \`removeOnComplete: false\`.`,
    `7. **Cancel**: ${num(c.cancels)} running \`sleep\` jobs (batches of ${c.cancelBatch}) cancelled one at a time: the API's answer (which already says \`cancelled\`), and the time until the worker logged "cancel: aborted running handler" for that task.`,
    ...(d.proxy
      ? [
          `8. **bullmq-proxy side by side** (when \`BENCH_BULLMQ_PROXY\` names a checkout): longrun's API on the pinned Bun and on this Node against the proxy on that Bun, alternating: submit against \`POST /queues/echo/jobs\` (add-job), poll against \`GET /queues/echo/jobs/:id\` (get-job); goals for longrun on Bun: submit ≥ 0.60× and poll ≥ 0.80× the proxy's req/s, CPU per submit (server + Redis) ≤ 1.60× the proxy's.`,
        ]
      : []),
    ...(d.httpWorker
      ? [
          `9. **HTTP workers** (issue 31; needs \`python3\`): ${num(d.httpWorker.jobs)} tasks queued with no worker running, then one worker process drains them, alternating: the stock SDK worker (\`echo\`, concurrency 10) and one \`examples/python-worker/worker.py\` process (\`py-wordcount\`, \`WORKER_MAX=10\`, results sent with its next lease call); jobs/s from the first completion to the last (start-up excluded), counted from the worker's own log lines; CPU per job of the worker, the API and Redis from \`/proc/<pid>/stat\` over each drain. Then ${num(d.httpWorker.idlePollers ?? 0)} long polls (\`waitMs\` 30 000) held open on an empty type: the API's CPU against the same API idle. Goals: drain ≥ 0.50× the SDK worker's; idle long polls < 5 % of a core. Alone: \`node bench/http-worker.mjs\`.`,
        ]
      : []),
  ].join('\n');
}

function detailsSection(d) {
  const m = d.memory;
  const pr = d.processRuns;
  const tripRows = [
    ['submit (API)', d.trips.submit],
    ['poll (API)', d.trips.poll],
    ['scrape /metrics (API)', d.trips.scrape],
    ['one echo job, longrun worker', d.trips.longrunJob],
    ['one echo job, raw BullMQ worker', d.trips.rawJob],
  ];
  return [
    '## Details',
    '',
    roundsTable('Submit (autocannon, 50 connections; CPU per request of the server process):', [
      ['longrun', d.submit.api, lat],
      ['bare Express', d.submit.bare, lat],
      ['Redis calls per submit (commandstats, script internals included)', d.submit.api, calls],
    ]),
    '',
    ...[
      [d.storedSmall, d.pollSmall],
      [d.storedBig, d.pollBig],
    ].flatMap(([stored, runs]) => [
      roundsTable(`Poll, ${num(stored)} tasks stored:`, [
        ['longrun', runs.api, lat],
        ['bare Express', runs.bare, lat],
        ['commands per poll', runs.api, (r) => perRequest(r).toFixed(2)],
        ['1 connection p50 / p99', runs.latency, latencyCell],
      ]),
      '',
    ]),
    roundsTable(
      `Scrape (1 connection); at the very start, 0 tasks, the same API answered in p50 / p99 ${latencyCell(d.scrapeAtStart)}:`,
      [
        [`${num(d.storedBig)} stored, p50 / p99`, d.scrape.big, latencyCell],
        ['0 stored, p50 / p99', d.scrape.empty, latencyCell],
      ],
    ),
    '',
    roundsTable('Process:', [
      ['raw BullMQ', pr.raw, job],
      ['longrun, 1 worker', pr.one, job],
      ['longrun, 2 workers', pr.two, job],
      ...(pr.four?.length ? [['longrun, 4 workers', pr.four, job]] : []),
    ]),
    '',
    `At LOG_LEVEL=info: longrun ${job(pr.oneInfo[0])}; raw, just before, ${job(pr.rawInfo[0])}. Raw queue.add rounds: ${d.rawAdds.map((r) => num(r)).join(', ')} adds/s. redis-benchmark SET rounds: ${d.setRates.map((r) => num(r)).join(', ')} req/s.`,
    '',
    'Redis commands per operation, exact, from a `MONITOR` sample (untimed): the commands clients sent, i.e. round trips unless pipelined, and apart from them the commands that ran inside Lua scripts.',
    '',
    markdownTable(
      ['operation', 'commands sent', 'run inside scripts'],
      tripRows.map(([name, s]) => [name, tripsText(s), tripsText(s, 'lua')]),
    ),
    '',
    `Memory: longrun ${num(m.longrun.perTask)} B per completed task (used_memory delta over ${num(m.longrun.tasks)} tasks). \`MEMORY USAGE\` of what one task keeps: record hash ${num(m.longrun.taskHash)} B (${m.longrun.sampleFields} fields), events key ${num(m.longrun.eventsStream)} B, index entry ~${num(m.longrun.indexEntry)} B. Raw BullMQ ${num(m.raw.perJob)} B per completed job: job hash ${num(m.raw.jobHash)} B, completed-set entry ~${num(m.raw.completedEntry)} B.`,
    '',
    `Cancel (${d.cancel.n}): answer p50 ${ms(d.cancel.answer.p50)}, p99 ${ms(d.cancel.answer.p99)}, max ${ms(d.cancel.answer.max)}; handler aborted p50 ${ms(d.cancel.aborted.p50)}, p99 ${ms(d.cancel.aborted.p99)}, max ${ms(d.cancel.aborted.max)}; never aborted: ${d.cancel.missing}.`,
    ...(d.proxy ? ['', '### bullmq-proxy side by side', '', proxyMarkdown(d.proxy)] : []),
    ...(d.httpWorker ? ['', '### HTTP workers', '', httpWorkerMarkdown(d.httpWorker)] : []),
  ].join('\n');
}

function profilesSection(profiles, c) {
  return [
    '## CPU profiles of the API',
    '',
    `The API run with \`node --cpu-prof\` under ${c.profileS} s of load (50 connections) after a 1 s warm-up, once submitting (${num(profiles.submitRps)} req/s under the profiler) and once polling (${num(profiles.pollRps)} req/s). Only samples taken during the load count; percentages are of busy (non-idle) time. "Charged to" moves the time of node internals and V8 natives (socket writes, HTTP, hashing) to the package, or longrun code, that called them. \`node bench/profile-summary.mjs\` prints these tables for any profile.`,
    '',
    '```text',
    render(profiles.submit, 'submit'),
    '```',
    '',
    '```text',
    render(profiles.poll, 'poll'),
    '```',
  ].join('\n');
}

function baselineSection(rows, baseline) {
  const before = new Map(baseline.rows.map((r) => [r.key ?? r.name, r]));
  const cell = (r) => r?.value || r?.ceiling || '';
  const rat = (r) => (r?.ratio === undefined || r?.ratio === null ? '' : ratio(r.ratio));
  return [
    '## Before / after',
    '',
    `Against \`bench/baseline.json\`: the run of ${baseline.env.date} measuring ${baseline.env.label ?? 'an earlier build'} (load average ${load(baseline.env.loadStart)} at its start). Compare the ratios: each was measured against its ceiling within its own run.`,
    '',
    markdownTable(
      ['#', 'figure', 'before', 'before ratio', 'now', 'now ratio'],
      rows.map((r) => {
        const b = before.get(r.key) ?? before.get(r.name);
        return [r.id, r.name, cell(b), rat(b), cell(r), rat(r)];
      }),
    ),
  ].join('\n');
}

/** The whole of docs/BENCHMARKS.md. */
export function markdown({
  env,
  rows,
  details,
  warnings,
  summaryText,
  profiles,
  baseline,
  config,
}) {
  const c = config ?? C;
  const analysisFile = join(root, 'bench/analysis.md');
  const analysis = existsSync(analysisFile)
    ? readFileSync(analysisFile, 'utf8')
        .replace(/^# .*\n/, '')
        .trim()
    : '';
  const parts = [
    '# Benchmarks',
    '',
    `Written by \`npm run bench\` (\`bench/run.mjs\`) on ${env.date}, measuring ${env.label ?? 'the built tree'}; do not edit by hand (the analysis comes from \`bench/analysis.md\`).`,
    '',
    howToRun(),
    '',
    '## Results',
    '',
    figuresMarkdown(rows),
    '',
    `Machine: ${env.cores} cores (${env.cpu}), Node ${env.node}, Redis ${env.redisVersion}. Load average at start ${load(env.loadStart)}, at end ${load(env.loadEnd)} (other agents share the machine). The run took ${num(env.seconds)} s.`,
    ...(warnings.length ? ['', 'Warnings:', '', ...warnings.map((w) => `- ${w}`)] : []),
    '',
    whatEachFigureIs(details, c),
    '',
    detailsSection(details),
    '',
  ];
  if (profiles) parts.push(profilesSection(profiles, c), '');
  if (baseline) parts.push(baselineSection(rows, baseline), '');
  if (analysis) parts.push(analysis, '');
  parts.push('## Console output of this run', '', '```text', summaryText, '```', '');
  return parts.join('\n');
}

/**
 * Writes docs/BENCHMARKS.md for a run's results (as `--json` saves them), compared with
 * bench/baseline.json unless the run is the baseline itself.
 */
export function writeDocs(result) {
  const baselineFile = join(root, 'bench/baseline.json');
  let baseline = existsSync(baselineFile) ? JSON.parse(readFileSync(baselineFile, 'utf8')) : null;
  if (baseline?.env?.date === result.env.date) baseline = null;
  writeFileSync(join(root, 'docs/BENCHMARKS.md'), markdown({ ...result, baseline }));
  say(
    `wrote docs/BENCHMARKS.md${baseline ? ` (compared with the baseline of ${baseline.env.date})` : ''}`,
  );
}
