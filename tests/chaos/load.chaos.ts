// Reliability 1: load. 200 "agents" follow task handles (honouring pollIntervalMs) while bounded
// submitters feed 20 000 echo jobs and 2 worker processes drain them. No 5xx, no lost task, no
// duplicate run, and the API's heap after GC is flat once the run is over.
// Sizes: CHAOS_SCALE (0.1 = quick), or CHAOS_LOAD_JOBS / CHAOS_LOAD_AGENTS.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Proc } from '../helpers/processes.js';
import { API_KEYS, KEY_A, startWorker, uniquePrefix } from '../helpers/service.js';
import {
  Cleanups,
  keepAliveAgent,
  closeBooks,
  heapAfterGc,
  heapProbeOptions,
  mb,
  NetError,
  percentiles,
  pool,
  rawRequest,
  report,
  rssBytes,
  scaled,
  secondsSince,
  startApiProcess,
  summary,
  Tally,
  TERMINAL,
  COUNT_RUNS,
} from './helpers.js';

const JOBS = scaled('LOAD_JOBS', 20_000, 200);
const AGENTS = scaled('LOAD_AGENTS', 200, 50);
const SUBMITTERS = 32;
const WARMUP = Math.min(1000, Math.round(JOBS / 10));
const POLL_MS = 200;
/** Heap growth (after GC, warm-up → end) that counts as a leak. */
const HEAP_GROWTH_LIMIT = 32 * 1024 * 1024;

const cleanups = new Cleanups();
afterAll(() => cleanups.run());

describe('load', () => {
  it(`${AGENTS} agents poll while 2 workers drain ${JOBS} jobs: no 5xx, nothing lost, heap flat`, async () => {
    const started = performance.now();
    const prefix = uniquePrefix();
    const redis = new Redis(inject('redisUrl'));
    cleanups.add(() => redis.quit());
    const api = await startApiProcess(cleanups, {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: prefix,
      LONGRUN_API_KEYS: API_KEYS,
      LONGRUN_POLL_INTERVAL_MS: String(POLL_MS),
      NODE_OPTIONS: heapProbeOptions(cleanups),
    });
    const workers: Proc[] = [];
    for (let i = 0; i < 2; i++) {
      const w = await startWorker(prefix, { ...COUNT_RUNS, LONGRUN_WORKER_CONCURRENCY: '50' });
      cleanups.add(() => w.kill());
      workers.push(w);
    }

    const agent = keepAliveAgent(cleanups, AGENTS + SUBMITTERS);
    const submits = new Tally();
    const polls = new Tally();
    const errors = new Tally();
    const problems: string[] = [];
    const accepted: string[] = [];
    const submitMs: number[] = [];
    const pollMs: number[] = [];
    let pollCount = 0;
    let terminalSeen = 0;
    let peakRss = 0;
    const rssTimer = setInterval(() => {
      peakRss = Math.max(peakRss, rssBytes(api.child.pid!));
    }, 500);
    cleanups.add(() => clearInterval(rssTimer));

    /** Submits `count` echo jobs, SUBMITTERS at a time; each 202 goes to the agents' queue. */
    const submitAll = async (from: number, count: number, queue: string[]) => {
      const indices = Array.from({ length: count }, (_, i) => from + i);
      await pool(indices, SUBMITTERS, async (i) => {
        try {
          const res = await rawRequest(api.url, {
            method: 'POST',
            path: '/v1/jobs',
            key: KEY_A,
            body: { type: 'echo', input: { i, note: 'load' } },
            agent,
            timeoutMs: 30_000,
          });
          submits.add(res.status);
          submitMs.push(res.ms);
          if (res.status === 202) {
            accepted.push(res.body.taskId);
            queue.push(res.body.taskId);
          } else if (problems.length < 20) problems.push(`submit ${res.status} ${res.text}`);
        } catch (error) {
          errors.add((error as NetError).code ?? 'unknown');
        }
      });
    };

    /** One agent: takes handles off the queue and polls each, at its pollIntervalMs, to the end. */
    const runAgents = async (queue: string[], done: () => boolean) => {
      let head = 0;
      const follow = async (id: string) => {
        let wait = POLL_MS;
        for (;;) {
          await sleep(wait);
          let res;
          try {
            res = await rawRequest(api.url, {
              path: `/v1/jobs/${id}`,
              key: KEY_A,
              agent,
              timeoutMs: 30_000,
            });
          } catch (error) {
            errors.add((error as NetError).code ?? 'unknown');
            return;
          }
          pollCount += 1;
          polls.add(res.status);
          pollMs.push(res.ms);
          if (res.status !== 200) {
            if (problems.length < 20) problems.push(`poll ${id} ${res.status} ${res.text}`);
            return;
          }
          if (TERMINAL.has(res.body.status)) {
            terminalSeen += 1;
            return;
          }
          wait = res.body.pollIntervalMs;
        }
      };
      await Promise.all(
        Array.from({ length: AGENTS }, async () => {
          for (;;) {
            if (head < queue.length) await follow(queue[head++]!);
            else if (done()) return;
            else await sleep(20);
          }
        }),
      );
    };

    const phase = async (from: number, count: number) => {
      const queue: string[] = [];
      let submitting = true;
      const agents = runAgents(queue, () => !submitting);
      await submitAll(from, count, queue);
      submitting = false;
      await agents;
    };

    // Warm-up: the same paths, so lazy initialisation and JIT are done before the baseline.
    await phase(0, WARMUP);
    await sleep(1000);
    const baseline = await heapAfterGc(api);
    const mainStarted = performance.now();
    await phase(WARMUP, JOBS - WARMUP);
    const mainSeconds = secondsSince(mainStarted);

    const books = await closeBooks(redis, prefix, accepted, { timeoutMs: 120_000 });
    await sleep(2000); // idle, so timers and sockets of the run can be collected
    const after = await heapAfterGc(api);
    const workerMetrics = await Promise.all(
      workers.map(async (w) => {
        const port = (w.ready as { metricsPort: number }).metricsPort;
        const res = await rawRequest(`http://127.0.0.1:${port}`, { path: '/metrics' });
        return res.text;
      }),
    );
    const runs = workerMetrics
      .map((text) =>
        /longrun_jobs_processed_total\{[^}]*outcome="completed"[^}]*\} (\d+)/.exec(text),
      )
      .map((m) => Number(m?.[1] ?? 0));

    report('load', {
      jobs: JOBS,
      agents: AGENTS,
      submits: submits.counts,
      polls: polls.counts,
      pollCount,
      submitLatencyMs: percentiles(submitMs),
      pollLatencyMs: percentiles(pollMs),
      terminalSeenByAgents: terminalSeen,
      networkErrors: errors.counts,
      ...summary(books),
      completedRunsPerWorker: runs,
      heapAfterGcMiB: { warm: mb(baseline.heapUsed), end: mb(after.heapUsed) },
      heapGrowthMiB: mb(after.heapUsed - baseline.heapUsed),
      rssMiB: { warm: mb(baseline.rss), end: mb(after.rss), peak: mb(peakRss) },
      mainPhaseSeconds: mainSeconds,
      jobsPerSecond: Math.round((JOBS - WARMUP) / mainSeconds),
      seconds: secondsSince(started),
    });

    expect(problems, problems.join('\n')).toEqual([]);
    expect(errors.counts).toEqual({});
    expect(submits.keys()).toEqual(['202']);
    expect(polls.keys()).toEqual(['200']);
    expect(accepted.length).toBe(JOBS);
    expect(terminalSeen).toBe(JOBS);
    expect(books.lost).toBe(0);
    expect(books.unfinished).toBe(0);
    expect(books.completed).toBe(JOBS);
    expect(books.terminalTwice).toBe(0);
    expect(books.unacknowledged).toBe(0);
    // Nothing crashed, so nothing may run twice (locks are 30 s; a duplicate means a false stall).
    expect(books.duplicated).toBe(0);
    expect(after.heapUsed - baseline.heapUsed).toBeLessThan(HEAP_GROWTH_LIMIT);
  });
});
