// The processes' logs: JSON lines for collectors, readable lines prefixed with the process on a
// terminal, and the dev key never inside a log line.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createLogger, resolveLogFormat } from '@longrun/engine/internal';
import { waitFor } from './helpers/http.js';
import { startApp, type Proc } from './helpers/processes.js';
import { startInProcessApi, startWorker, uniquePrefix } from './helpers/service.js';

const root = resolve(import.meta.dirname, '..');
const TMUX = '/usr/bin/tmux';
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A real writable that keeps what it is given; `isTTY` as a terminal's stdout has it. */
function output(isTTY: boolean) {
  const chunks: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk.toString());
        done();
      },
    }),
    { isTTY },
  );
  return { stream, text: () => chunks.join('') };
}

describe('createLogger', () => {
  it('chooses pretty only for a terminal outside production, unless told', () => {
    expect(resolveLogFormat('auto', true, 'development')).toBe('pretty');
    expect(resolveLogFormat('auto', true, undefined)).toBe('pretty');
    expect(resolveLogFormat('auto', true, 'production')).toBe('json');
    expect(resolveLogFormat('auto', false, 'development')).toBe('json');
    expect(resolveLogFormat('json', true, 'development')).toBe('json');
    expect(resolveLogFormat('pretty', false, 'production')).toBe('pretty');
  });

  it('writes readable lines that start with the process on a terminal', () => {
    const out = output(true);
    const prev = process.env.NO_COLOR;
    process.env.NO_COLOR = '1';
    try {
      const log = createLogger({ process: 'worker', nodeEnv: 'development', stream: out.stream });
      log.info({ jobs: 3 }, 'worker ready');
    } finally {
      if (prev === undefined) delete process.env.NO_COLOR;
      else process.env.NO_COLOR = prev;
    }
    const line = out.text();
    expect(line).toMatch(/^worker \| \[\d\d:\d\d:\d\d\.\d{3}\] INFO: worker ready \{"jobs":3\}\n$/);
  });

  it('writes one JSON object per line when not on a terminal, named longrun-<process>', () => {
    const out = output(false);
    const log = createLogger({ process: 'api', nodeEnv: 'development', stream: out.stream });
    log.warn({ port: 3000 }, 'api ready');
    const record = JSON.parse(out.text()) as Record<string, unknown>;
    expect(record).toMatchObject({ level: 40, name: 'longrun-api', port: 3000, msg: 'api ready' });
  });
});

describe("the worker's task lines", () => {
  it('logs one info line when a task starts and one when it completes or fails, as the README says', async () => {
    const api = await startInProcessApi();
    cleanups.push(() => api.close());
    const worker = await startWorker(api.prefix); // LOG_LEVEL=info, the default
    cleanups.push(() => worker.stop());
    const ok = await api.http('POST', '/v1/jobs', {
      body: { type: 'echo', input: { n: 1 } },
      headers: { 'x-request-id': 'req-lines-1' },
    });
    const bad = await api.http('POST', '/v1/jobs', {
      body: { type: 'fail', input: { message: 'no' } },
    });
    expect([ok.status, bad.status]).toEqual([202, 202]);
    const records = () =>
      worker.lines
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const line = (msg: string, taskId: string) =>
      records().find((r) => r.msg === msg && r.taskId === taskId);
    await waitFor(async () => line('task failed', bad.body.taskId), {
      what: 'the failed task line',
    });
    await waitFor(async () => line('task completed', ok.body.taskId), {
      what: 'the completed task line',
    });
    for (const [taskId, type, end] of [
      [ok.body.taskId, 'echo', 'task completed'],
      [bad.body.taskId, 'fail', 'task failed'],
    ] as const) {
      const started = line('task started', taskId);
      expect(started, worker.lines.join('\n')).toMatchObject({ level: 30, taskId, type });
      const ended = line(end, taskId);
      expect(ended).toMatchObject({ level: 30, taskId, type });
      expect(ended?.durationMs).toEqual(expect.any(Number));
      // One line each.
      const mine = records().filter((r) => r.taskId === taskId);
      expect(mine.map((r) => r.msg)).toEqual(['task started', end]);
    }
    expect(line('task started', ok.body.taskId)?.requestId).toBe('req-lines-1');
    // One run, one attempt number on both its lines (issue 40): 1 for a first run.
    for (const [taskId, end] of [
      [ok.body.taskId, 'task completed'],
      [bad.body.taskId, 'task failed'],
    ] as const) {
      expect([line('task started', taskId)?.attempt, line(end, taskId)?.attempt]).toEqual([1, 1]);
    }
    // The README names the lines a worker prints.
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    for (const msg of ['task started', 'task completed', 'task failed']) {
      expect(readme).toContain(`\`${msg}\``);
    }
  });
});

describe("the worker's attempt numbers", () => {
  it('a retried task logs each run with its own attempt, the same on its start and end lines', async () => {
    const api = await startInProcessApi();
    cleanups.push(() => api.close());
    const worker = await startWorker(api.prefix);
    cleanups.push(() => worker.stop());
    // `flaky` fails its first attempt, then completes on its second (attempts: 3).
    const res = await api.http('POST', '/v1/jobs', {
      body: { type: 'flaky', input: { failTimes: 1 } },
    });
    expect(res.status, res.text).toBe(202);
    const taskId = res.body.taskId as string;
    const mine = () =>
      worker.lines
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((r) => r.taskId === taskId);
    await waitFor(async () => mine().some((r) => r.msg === 'task completed'), {
      what: 'the completed task line',
    });
    expect(mine().map((r) => [r.msg, r.attempt])).toEqual([
      ['task started', 1],
      ['task run ended', 1],
      ['task started', 2],
      ['task completed', 2],
    ]);
    expect(mine()[1]?.outcome).toBe('retrying');
  });
});

describe('the API without keys', () => {
  it('prints the dev key on stderr and logs JSON lines without it when piped', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'longrun-logs-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const api: Proc = await startApp('api', {
      LONGRUN_DATA_DIR: dataDir,
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: uniquePrefix(),
      LONGRUN_API_KEYS: '',
      NODE_ENV: 'development',
      PORT: '0',
      HOST: '127.0.0.1',
    });
    cleanups.push(() => api.stop());
    const banner = api.lines.find((l) => l.includes('longrun dev API key'));
    const key = /dev-[A-Za-z0-9_-]{20,}/.exec(banner ?? '')?.[0];
    expect(key, api.lines.join('\n')).toBeDefined();
    const logLines = api.lines.filter((l) => l.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(1);
    for (const line of logLines) {
      expect(() => JSON.parse(line) as unknown).not.toThrow();
      expect(line).not.toContain(key);
    }
    expect(logLines.some((l) => l.includes('made a dev key'))).toBe(true);
  });
});

describe.skipIf(!existsSync(TMUX))('npm start on a terminal (tmux)', { timeout: 60_000 }, () => {
  it('prints readable lines prefixed with api and worker, the dev key only in its banner', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'longrun-logs-tty-'));
    const script = join(dir, 'run.sh');
    writeFileSync(
      script,
      [
        `cd '${root}'`,
        `export REDIS_URL='${inject('redisUrl')}' LONGRUN_PREFIX='${uniquePrefix()}' LONGRUN_DATA_DIR='${dir}/data'`,
        "export LONGRUN_SKIP_BUILD=1 LONGRUN_API_KEYS='' NODE_ENV=development PORT=0 HOST=127.0.0.1",
        'unset LONGRUN_LOG_FORMAT NO_COLOR',
        // Ctrl-C reaches the whole foreground group: the shell outlives it to print the exit.
        "trap 'true' INT",
        `'${process.execPath}' scripts/start.mjs`,
        'echo "EXIT=$?"',
        'sleep 60',
      ].join('\n'),
    );
    const socket = `longrun-logs-${randomUUID().slice(0, 8)}`;
    const tmux = (...args: string[]) =>
      execFileSync(TMUX, ['-L', socket, ...args], { encoding: 'utf8' });
    tmux('new-session', '-d', '-x', '220', '-y', '40', '-s', 'logs', `sh ${script}`);
    cleanups.push(() => {
      rmSync(dir, { recursive: true, force: true });
      tmux('kill-server');
    });
    const capture = () => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', 'logs');

    const pane = await waitFor(
      async () => {
        const text = capture();
        return /^api +\| .*INFO: api ready/m.test(text) &&
          /^worker \| .*INFO: worker ready/m.test(text)
          ? text
          : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'both processes ready in the pane' },
    );
    const lines = pane.split('\n').filter((l) => l.trim() !== '');
    expect(
      lines.filter((l) => l.trimStart().startsWith('{')),
      pane,
    ).toEqual([]);
    const key = /longrun dev API key \(tenant "dev"\): (\S+)/.exec(pane)?.[1];
    expect(key, pane).toMatch(/^dev-/);
    expect(lines.filter((l) => l.includes(key!))).toHaveLength(1);
    // npm start made the key (kept under the data dir), so the API has one: no warning of its own.
    expect(pane).not.toMatch(/LONGRUN_API_KEYS is not set/);
    expect(readFileSync(join(dir, 'data/dev-api-key'), 'utf8').trim()).toBe(key);

    tmux('send-keys', '-t', 'logs', 'C-c');
    const final = await waitFor(async () => (/EXIT=\d+/.test(capture()) ? capture() : undefined), {
      timeoutMs: 20_000,
      intervalMs: 200,
      what: 'npm start to stop on Ctrl-C',
    });
    expect(final).toContain('EXIT=0');
  });
});
