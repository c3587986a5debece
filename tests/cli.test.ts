import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type LongrunClient, type TaskHandle, type TaskList } from '@longrun/client';
import { waitFor } from './helpers/http.js';
import type { Proc } from './helpers/processes.js';
import { KEY_A, startInProcessApi, startWorker, type InProcessApi } from './helpers/service.js';
import { CLOSED_URL } from './helpers/closed-port.js';

const CLI = resolve(import.meta.dirname, '../apps/cli/dist/main.js');
const TMUX = '/usr/bin/tmux';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let api: InProcessApi;
let worker: Proc;
let lr: LongrunClient;
const cleanups: (() => Promise<unknown> | unknown)[] = [];

beforeAll(async () => {
  api = await startInProcessApi();
  cleanups.push(() => api.close());
  worker = await startWorker(api.prefix);
  cleanups.push(() => worker.stop());
  lr = createClient({ baseUrl: api.url, apiKey: KEY_A });
});
afterAll(async () => {
  // Work a failed test left running would hold up the worker's graceful stop.
  const working = await lr?.list({ status: 'working', limit: 100 }).catch(() => undefined);
  for (const task of working?.tasks ?? []) await lr.cancel(task.taskId).catch(() => undefined);
  for (const cleanup of cleanups.splice(0).reverse()) {
    await Promise.resolve()
      .then(cleanup)
      .catch(() => undefined);
  }
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a user would, against the test API unless `env` says otherwise. */
function longrun(
  args: string[],
  opts: { env?: Record<string, string | undefined>; stdin?: string } = {},
): Promise<Run> {
  const merged = { ...process.env, LONGRUN_URL: api.url, LONGRUN_API_KEY: KEY_A, ...opts.env };
  const env = Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== undefined));
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(opts.stdin ?? '');
  return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
}

// Every run is a fresh Node process, so the suites below allow for a busy machine (60 s a test).
const show = (run: Run) => `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;

async function submitted(type: string, input: unknown): Promise<string> {
  const run = await longrun(['submit', type, '--input', JSON.stringify(input)]);
  expect(run.code, show(run)).toBe(0);
  const id = run.stdout.trim();
  expect(id).toMatch(UUID);
  return id;
}

describe('usage', { timeout: 60_000 }, () => {
  it('prints help (exit 0) and refuses bad command lines (exit 4)', async () => {
    const help = await longrun(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('longrun submit <type>');
    expect(help.stdout).toContain('Exit codes');

    const version = await longrun(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);

    const cases: [string[], RegExp][] = [
      [[], /Usage/],
      [['frobnicate'], /Unknown command "frobnicate"/],
      [['get'], /Usage: longrun get <id>/],
      [['list', '--input', '{}'], /list does not take --input/],
      [['get', 'x', '--nope'], /Unknown option '--nope'/],
      [['input', randomUUID()], /--input/],
      [['submit', 'echo', '--input', '{oops'], /not valid JSON/],
      [['submit', 'echo', '--input', '[1]'], /JSON object/],
      [['list', '--limit', 'ten'], /--limit must be a whole number/],
      [['list', '--status', 'done'], /--status must be one of/],
    ];
    const runs = await Promise.all(cases.map(([args]) => longrun(args)));
    cases.forEach(([args, message], i) => {
      expect(runs[i]!.code, `${args.join(' ')}: ${show(runs[i]!)}`).toBe(4);
      expect(runs[i]!.stderr, args.join(' ')).toMatch(message);
    });
    // Each quote the unknown-option message opens, it closes (issue 27: node's own text does not).
    const unknown = runs[cases.findIndex(([args]) => args.includes('--nope'))]!.stderr;
    for (const quote of ["'", '"']) {
      expect(unknown.split(quote).length % 2, `${quote} in ${unknown}`).toBe(1);
    }
  });

  it('needs an API key, and says how to get one', async () => {
    const run = await longrun(['list'], { env: { LONGRUN_API_KEY: undefined } });
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/LONGRUN_API_KEY/);
  });

  it('exits 4 naming the cause when the API is unreachable or refuses the key', async () => {
    const down = await longrun(['list'], { env: { LONGRUN_URL: CLOSED_URL } });
    expect(down.code, show(down)).toBe(4);
    expect(down.stderr).toMatch(/ECONNREFUSED/);

    const denied = await longrun(['list', '--api-key', 'wrong-key-0123456789']);
    expect(denied.code).toBe(4);
    expect(denied.stderr).toMatch(/Unauthorized/);

    const json = await longrun(['list', '--json', '--api-key', 'wrong-key-0123456789']);
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stderr)).toMatchObject({ status: 401, title: 'Unauthorized' });
  });

  it('shows which field of the input is wrong (exit 4)', async () => {
    const run = await longrun(['submit', 'sleep', '--input', '{"ms":"x"}']);
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/input\.ms: /);
  });
});

describe('a task from the shell', { timeout: 60_000 }, () => {
  it('submit prints the id; get, wait and result follow it (exit 0)', async () => {
    const id = await submitted('echo', { hello: 'shell' });

    const got = await longrun(['get', id, '--json']);
    expect(got.code).toBe(0);
    expect((JSON.parse(got.stdout) as TaskHandle).taskId).toBe(id);

    const waited = await longrun(['wait', id]);
    expect(waited.code, show(waited)).toBe(0);
    expect(JSON.parse(waited.stdout)).toEqual({ hello: 'shell' });

    const result = await longrun(['result', id]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ hello: 'shell' });

    const described = await longrun(['get', id]);
    expect(described.stdout).toMatch(/^status\s+completed/m);
    expect(described.stdout).toContain('{"hello":"shell"}');

    const forgot = await longrun(['forget', id]);
    expect(forgot.code).toBe(0);
    const gone = await longrun(['get', id]);
    expect(gone.code).toBe(4);
    expect(gone.stderr).toMatch(/Task not found/);
  });

  it('submit --wait prints the result; piped, progress comes as plain lines on stderr', async () => {
    const run = await longrun(['submit', 'sleep', '--input', '{"ms":2500}', '--wait']);
    expect(run.code, show(run)).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ sleptMs: 2500 });
    const lines = run.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^working/);
    expect(lines.some((l) => /^working\s+\d+% slept \d+ of 2500 ms$/.test(l))).toBe(true);
    expect(run.stderr).not.toContain('\x1b['); // no terminal control codes in a pipe
  });

  it('--json prints machine-readable handles and no progress lines', async () => {
    const run = await longrun(['submit', 'echo', '--input', '{"j":1}', '--json']);
    expect(run.code).toBe(0);
    const handle = JSON.parse(run.stdout) as TaskHandle;
    expect(handle).toMatchObject({ resultType: 'task', type: 'echo', status: 'working' });

    const waited = await longrun(['wait', handle.taskId, '--json']);
    expect(waited.code).toBe(0);
    expect(waited.stderr).toBe('');
    expect(JSON.parse(waited.stdout)).toMatchObject({ status: 'completed', result: { j: 1 } });

    const listed = await longrun(['list', '--json', '--limit', '100', '--status', 'completed']);
    expect(listed.code).toBe(0);
    const list = JSON.parse(listed.stdout) as TaskList;
    expect(list.tasks.map((t) => t.taskId)).toContain(handle.taskId);

    const table = await longrun(['list']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^TASK\s+TYPE\s+STATUS\s+UPDATED\s+MESSAGE$/m);
    expect(table.stdout).toContain(handle.taskId);
  });

  it('exits 1 for a failed task', async () => {
    const run = await longrun([
      'submit',
      'fail',
      '--input',
      '{"message":"disk on fire"}',
      '--wait',
    ]);
    expect(run.code, show(run)).toBe(1);
    expect(run.stderr).toMatch(/failed: disk on fire/);
    const id = (await lr.list({ limit: 1 })).tasks[0]!.taskId;
    const result = await longrun(['result', id, '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed' });
  });

  it('exits 2 for a cancelled task; 5 while it still works', async () => {
    const id = await submitted('sleep', { ms: 60_000 });
    const early = await longrun(['result', id]);
    expect(early.code, show(early)).toBe(5);
    expect(early.stderr).toMatch(/working/);
    const timedOut = await longrun(['wait', id, '--timeout-ms', '300']);
    expect(timedOut.code, show(timedOut)).toBe(5);

    const cancelled = await longrun(['cancel', id]);
    expect(cancelled.code, show(cancelled)).toBe(0);
    expect(cancelled.stdout).toContain(`cancelled ${id}`);
    const waited = await longrun(['wait', id]);
    expect(waited.code).toBe(2);
    expect(waited.stderr).toMatch(/^cancelled: /m);
    const result = await longrun(['result', id, '--json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ taskId: id, status: 'cancelled' });
    const again = await longrun(['cancel', id]);
    expect(again.code).toBe(4);
  });

  it('exits 3 with the question and schema; input answers it', async () => {
    const run = await longrun([
      'submit',
      'approval',
      '--input',
      '{"question":"Ship 42?"}',
      '--wait',
    ]);
    expect(run.code, show(run)).toBe(3);
    const id = /longrun input (\S+) --input/.exec(run.stdout)?.[1];
    expect(id).toMatch(UUID);
    expect(run.stdout).toContain('needs input: Ship 42?');
    expect(run.stdout).toContain('"approved"');

    expect((await longrun(['result', id!])).code).toBe(3);
    expect((await longrun(['wait', id!])).code).toBe(3);

    const wrong = await longrun(['input', id!, '--input', '{"approved":"yes"}']);
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toMatch(/approved/);

    const answered = await longrun(['input', id!, '--input', '-'], {
      stdin: '{"approved":true,"comment":"go"}',
    });
    expect(answered.code, show(answered)).toBe(0);
    expect(answered.stdout).toContain(`answered ${id}`);
    const done = await longrun(['wait', id!, '--json']);
    expect(done.code).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({
      status: 'completed',
      result: { approved: true, comment: 'go' },
    });
  });

  it('submit --tag labels the task; get shows the tags, list --tag filters by one', async () => {
    const tagged = await longrun([
      'submit',
      'echo',
      '--input',
      '{"t":1}',
      '--tag',
      'cli-a',
      '--tag',
      'cli b',
    ]);
    expect(tagged.code, tagged.stderr).toBe(0);
    const id = tagged.stdout.trim();
    await longrun(['submit', 'echo', '--input', '{"t":2}', '--tag', 'cli-other']);
    const shown = await longrun(['get', id]);
    expect(shown.stdout).toMatch(/^tags {6}cli-a, cli b$/m);
    const listed = await longrun(['list', '--tag', 'cli-a']);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^TASK\s+TYPE\s+STATUS\s+UPDATED\s+TAGS\s+MESSAGE$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(id);
    expect(lines[1]).toContain('cli-a,cli b');
    const twice = await longrun(['list', '--tag', 'a', '--tag', 'b']);
    expect(twice.code).toBe(4);
    expect(twice.stderr).toContain('list takes one --tag');
    const bad = await longrun(['submit', 'echo', '--tag', 'x'.repeat(65)]);
    expect(bad.code).toBe(4);
    expect(bad.stderr).toContain('tags.0');
  });

  it('reads --input from a file and reuses an idempotency key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'longrun-cli-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'input.json');
    writeFileSync(file, '{"from":"file"}');
    const key = `cli-${randomUUID()}`;
    const a = await longrun(['submit', 'echo', '--input', `@${file}`, '--idempotency-key', key]);
    const b = await longrun(['submit', 'echo', '--input', `@${file}`, '--idempotency-key', key]);
    expect(a.code, show(a)).toBe(0);
    expect(b.stdout).toBe(a.stdout);
    expect((await lr.wait(a.stdout.trim())).result).toEqual({ from: 'file' });
  });
});

describe.skipIf(!existsSync(TMUX))('on a terminal (tmux)', { timeout: 60_000 }, () => {
  /** Runs `script` in a detached 100x20 tmux pane on a private tmux server. */
  function terminal(script: string) {
    const dir = mkdtempSync(join(tmpdir(), 'longrun-cli-tty-'));
    const file = join(dir, 'run.sh');
    writeFileSync(
      file,
      [
        `export LONGRUN_URL='${api.url}' LONGRUN_API_KEY='${KEY_A}'`,
        // Ctrl-C reaches the whole foreground group: the shell outlives it to print the exit.
        "trap 'true' INT",
        script,
        'echo "EXIT=$?"',
        'sleep 120',
      ].join('\n'),
    );
    const socket = `longrun-test-${randomUUID().slice(0, 8)}`;
    const tmux = (...args: string[]) =>
      execFileSync(TMUX, ['-L', socket, ...args], { encoding: 'utf8' });
    tmux('new-session', '-d', '-x', '100', '-y', '20', '-s', 'cli', `sh ${file}`);
    cleanups.push(() => {
      rmSync(dir, { recursive: true, force: true });
      tmux('kill-server');
    });
    const frames: string[] = [];
    return {
      frames,
      tmux,
      capture(): string {
        const pane = tmux('capture-pane', '-p', '-t', 'cli');
        frames.push(pane);
        return pane;
      },
    };
  }
  const BAR = /\[[#-]{24}\]\s+\d+%/;
  const CLI_CMD = `'${process.execPath}' '${CLI}'`;

  it('draws one live progress line in place, then clears it for the result', async () => {
    const term = terminal(`${CLI_CMD} submit sleep --input '{"ms":4000}' --wait`);
    const final = await waitFor(
      async () => {
        const pane = term.capture();
        return pane.includes('EXIT=') ? pane : undefined;
      },
      { timeoutMs: 25_000, intervalMs: 100, what: 'the CLI to finish in tmux' },
    );
    expect(final, final).toContain('EXIT=0');
    expect(final).toMatch(/"sleptMs": 4000/);
    expect(final).not.toMatch(BAR); // the live line is gone once the result is printed
    expect(term.tmux('display', '-p', '-t', 'cli', '#{cursor_flag}').trim()).toBe('1');

    const drawn = term.frames.flatMap((f) => f.split('\n').filter((l) => BAR.test(l)));
    expect(drawn.length, term.frames.join('\n----\n')).toBeGreaterThan(0);
    expect(drawn[0]).toMatch(
      /^[|/\\-] sleep [0-9a-f]{8} working \[[#-]{24}\]\s+\d+% slept \d+ of 4000 ms \d+s$/,
    );
    // Redrawn in place: never two progress lines on the screen at once.
    for (const frame of term.frames) {
      expect(frame.split('\n').filter((l) => BAR.test(l)).length).toBeLessThanOrEqual(1);
    }
    expect(new Set(drawn).size).toBeGreaterThan(1); // it moves (spinner, percent, seconds)
  });

  it('Ctrl-C stops waiting, restores the terminal and leaves the task running (exit 130)', async () => {
    const term = terminal(`${CLI_CMD} submit sleep --input '{"ms":60000}' --wait`);
    await waitFor(async () => BAR.test(term.capture()) || undefined, {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: 'the progress bar',
    });
    expect(term.tmux('display', '-p', '-t', 'cli', '#{cursor_flag}').trim()).toBe('0'); // hidden
    term.tmux('send-keys', '-t', 'cli', 'C-c');
    const final = await waitFor(
      async () => {
        const pane = term.capture();
        return pane.includes('EXIT=') ? pane : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100, what: 'the CLI to stop' },
    );
    expect(final, final).toContain('EXIT=130');
    expect(term.tmux('display', '-p', '-t', 'cli', '#{cursor_flag}').trim()).toBe('1'); // shown again
    const id = /Stopped waiting; task (\S+) goes on/.exec(final)?.[1];
    expect(id, final).toMatch(UUID);
    expect((await lr.get(id!)).status).toBe('working');
    await lr.cancel(id!);
  });
});
