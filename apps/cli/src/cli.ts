import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  createClient,
  isTerminal,
  LongrunError,
  TASK_STATUSES,
  type LongrunClient,
  type TaskHandle,
  type TaskStatus,
} from '@longrun/client';
import { HELP, integer, parse, UsageError, type CommandName, type Values } from './args.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { follow } from './follow.js';
import {
  describe,
  describeSchedule,
  inputPrompt,
  pretty,
  schedulesTable,
  table,
  typesTable,
} from './format.js';
import { progressView, type Output } from './progress.js';
import { typescriptModule } from './typescript.js';

export interface Io {
  stdout: Output;
  stderr: Output;
  stdin: AsyncIterable<Buffer | string>;
  env: Record<string, string | undefined>;
  version: string;
  /** Aborted on Ctrl-C. */
  interrupt: AbortSignal;
}

const DEFAULT_URL = 'http://localhost:3000';

/**
 * Runs one `longrun` command line and returns its exit code.
 * @example process.exitCode = await run(['get', id, '--json'], io)
 */
export async function run(argv: string[], io: Io): Promise<number> {
  let json = argv.includes('--json');
  try {
    const parsed = parse(argv);
    if (parsed.kind === 'help') {
      // Asked for: on stdout, success. No command at all: a usage error.
      (parsed.asked ? io.stdout : io.stderr).write(HELP);
      return parsed.asked ? EXIT.ok : EXIT.error;
    }
    if (parsed.kind === 'version') {
      io.stdout.write(`${io.version}\n`);
      return EXIT.ok;
    }
    json = parsed.values.json ?? false;
    const client = clientFrom(parsed.values, io.env);
    return await commands[parsed.command](client, parsed.arg ?? '', parsed.values, io);
  } catch (error) {
    return report(error, io, json);
  }
}

function baseUrlFrom(values: Values, env: Io['env']): string {
  return values.url ?? (env.LONGRUN_URL || DEFAULT_URL);
}

function clientFrom(values: Values, env: Io['env']): LongrunClient {
  const baseUrl = baseUrlFrom(values, env);
  const apiKey = values['api-key'] ?? env.LONGRUN_API_KEY;
  if (!apiKey) {
    throw new UsageError(
      'No API key: set LONGRUN_API_KEY (or pass --api-key); `npm start` prints a development key',
    );
  }
  try {
    new URL(baseUrl);
  } catch {
    throw new UsageError(`Not a URL: ${baseUrl}`);
  }
  return createClient({ baseUrl, apiKey });
}

type Command = (client: LongrunClient, arg: string, values: Values, io: Io) => Promise<number>;

const commands: Record<CommandName, Command> = {
  async submit(client, type, values, io) {
    const input = values.input === undefined ? {} : await readJson(values.input, io);
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new UsageError('--input must be a JSON object for submit');
    }
    const callback =
      values['callback-url'] === undefined
        ? undefined
        : { url: values['callback-url'], secret: values['callback-secret'] };
    if (callback === undefined && values['callback-secret'] !== undefined) {
      throw new UsageError('--callback-secret needs --callback-url');
    }
    const task = await client.submit(type, input as Record<string, unknown>, {
      idempotencyKey: values['idempotency-key'],
      ttlMs: integer(values['ttl-ms'], 'ttl-ms'),
      delayMs: integer(values['delay-ms'], 'delay-ms'),
      runAt: values['run-at'],
      timeoutMs: integer(values['run-timeout-ms'], 'run-timeout-ms'),
      callback,
      signal: io.interrupt,
    });
    if (values.wait) return waitAndReport(client, task, values, io);
    if (values.json) io.stdout.write(pretty(task));
    else {
      io.stdout.write(`${task.taskId}\n`);
      if (io.stderr.isTTY)
        io.stderr.write(`submitted; follow it with: longrun wait ${task.taskId}\n`);
    }
    return EXIT.ok;
  },

  async get(client, id, values, io) {
    const task = await client.get(id, { signal: io.interrupt });
    io.stdout.write(values.json ? pretty(task) : describe(task));
    return EXIT.ok;
  },

  async wait(client, id, values, io) {
    // A first read fails fast (bad id, key or URL) before the patient loop starts.
    const task = await client.get(id, { signal: io.interrupt });
    return waitAndReport(client, task, values, io);
  },

  async result(client, id, values, io) {
    try {
      const result = await client.result(id, { signal: io.interrupt });
      if (values.json) io.stdout.write(pretty(result));
      else if (result.status === 'completed') io.stdout.write(pretty(result.result));
      else io.stderr.write(`${result.status}: ${result.error?.message ?? 'no message'}\n`);
      return exitCodeFor(result.status);
    } catch (error) {
      if (!(error instanceof LongrunError) || error.status !== 409) throw error;
      // Not finished: say where it stands, and how to wait for it.
      const status = error.problem.taskStatus as TaskStatus;
      if (values.json) io.stdout.write(pretty({ taskId: id, status }));
      else if (status === 'input_required')
        io.stdout.write(inputPrompt(await client.get(id, { signal: io.interrupt })));
      else io.stderr.write(`The task is ${status}; wait for it with: longrun wait ${id}\n`);
      return exitCodeFor(status);
    }
  },

  async cancel(client, id, values, io) {
    const task = await client.cancel(id, { signal: io.interrupt });
    io.stdout.write(values.json ? pretty(task) : `cancelled ${task.taskId}\n`);
    return EXIT.ok;
  },

  async input(client, id, values, io) {
    const answer = await readJson(values.input!, io);
    const task = await client.input(id, answer, { signal: io.interrupt });
    io.stdout.write(values.json ? pretty(task) : `answered ${task.taskId}: ${task.status}\n`);
    return EXIT.ok;
  },

  async list(client, _arg, values, io) {
    const status = values.status;
    if (status !== undefined && !(TASK_STATUSES as readonly string[]).includes(status)) {
      throw new UsageError(`--status must be one of: ${TASK_STATUSES.join(', ')}`);
    }
    const list = await client.list({
      status: status as TaskStatus | undefined,
      type: values.type,
      scheduleId: values.schedule,
      limit: integer(values.limit, 'limit'),
      cursor: values.cursor,
      signal: io.interrupt,
    });
    io.stdout.write(values.json ? pretty(list) : table(list));
    return EXIT.ok;
  },

  async forget(client, id, values, io) {
    await client.forget(id, { signal: io.interrupt });
    io.stdout.write(values.json ? pretty({ taskId: id, forgotten: true }) : `forgot ${id}\n`);
    return EXIT.ok;
  },

  async types(client, _arg, values, io) {
    const jobTypes = await client.jobTypes({ signal: io.interrupt });
    if (!values.typescript) {
      io.stdout.write(values.json ? pretty({ jobTypes }) : typesTable(jobTypes));
      return EXIT.ok;
    }
    const { code, warnings } = await typescriptModule(jobTypes, {
      source: baseUrlFrom(values, io.env).replace(/\/+$/, ''),
      generatedAt: new Date(),
    });
    for (const warning of warnings) io.stderr.write(`longrun: warning: ${warning}\n`);
    if (jobTypes.length === 0) io.stderr.write('longrun: warning: no job types are registered\n');
    if (values.out === undefined) {
      io.stdout.write(code);
      return EXIT.ok;
    }
    const out = values.out;
    // Into a folder not made yet (src/generated/…), as code generators do.
    await mkdir(dirname(out), { recursive: true })
      .then(() => writeFile(out, code))
      .catch((error: Error) => {
        throw new Error(`Cannot write ${out}: ${error.message}`);
      });
    const count = `${jobTypes.length} job type${jobTypes.length === 1 ? '' : 's'}`;
    io.stdout.write(`wrote ${count} to ${values.out}\n`);
    return EXIT.ok;
  },

  async 'schedules create'(client, type, values, io) {
    const input = values.input === undefined ? {} : await readJson(values.input, io);
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new UsageError('--input must be a JSON object for schedules create');
    }
    const timing =
      values.cron !== undefined
        ? { cron: values.cron, ...(values.tz !== undefined ? { tz: values.tz } : {}) }
        : { everyMs: integer(values['every-ms'], 'every-ms') as number };
    const schedule = await client.createSchedule(type, input as Record<string, unknown>, {
      ...timing,
      ttlMs: integer(values['ttl-ms'], 'ttl-ms'),
      timeoutMs: integer(values['run-timeout-ms'], 'run-timeout-ms'),
      idempotencyKey: values['idempotency-key'],
      signal: io.interrupt,
    });
    if (values.json) io.stdout.write(pretty(schedule));
    else {
      io.stdout.write(`${schedule.scheduleId}\n`);
      if (io.stderr.isTTY) {
        io.stderr.write(
          `first run ${schedule.nextRunAt ?? 'not scheduled'}; its tasks: longrun list --schedule ${schedule.scheduleId}\n`,
        );
      }
    }
    return EXIT.ok;
  },

  async 'schedules list'(client, _arg, values, io) {
    const schedules = await client.listSchedules({ signal: io.interrupt });
    io.stdout.write(values.json ? pretty({ schedules }) : schedulesTable(schedules));
    return EXIT.ok;
  },

  async 'schedules get'(client, id, values, io) {
    const schedule = await client.getSchedule(id, { signal: io.interrupt });
    io.stdout.write(values.json ? pretty(schedule) : describeSchedule(schedule));
    return EXIT.ok;
  },

  async 'schedules delete'(client, id, values, io) {
    await client.deleteSchedule(id, { signal: io.interrupt });
    io.stdout.write(values.json ? pretty({ scheduleId: id, deleted: true }) : `deleted ${id}\n`);
    return EXIT.ok;
  },
};

/** Waits with a progress view, then prints the outcome; the exit code says what it was. */
async function waitAndReport(
  client: LongrunClient,
  first: TaskHandle,
  values: Values,
  io: Io,
): Promise<number> {
  const timeoutMs = integer(values['timeout-ms'], 'timeout-ms');
  const timeout = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
  const signal = timeout ? AbortSignal.any([io.interrupt, timeout]) : io.interrupt;
  const label = `${first.type} ${first.taskId.slice(0, 8)}`;
  const view = progressView(io.stderr, label, { quiet: values.json ?? false, env: io.env });
  let task = first;
  try {
    view.update(first);
    const settled = isTerminal(first.status) || first.status === 'input_required';
    if (!settled) {
      task = await follow(client, first.taskId, {
        signal,
        onUpdate: (update) => {
          task = update;
          view.update(update);
        },
      });
    }
  } catch (error) {
    view.stop();
    if (io.interrupt.aborted) {
      io.stderr.write(
        `Stopped waiting; task ${first.taskId} goes on (longrun cancel ${first.taskId} stops it)\n`,
      );
      return EXIT.interrupted;
    }
    if (timeout?.aborted) {
      if (values.json) io.stdout.write(pretty(task));
      else io.stderr.write(`Still ${task.status} after ${timeoutMs} ms: ${first.taskId}\n`);
      return EXIT.notFinished;
    }
    throw error;
  }
  view.stop();
  if (values.json) io.stdout.write(pretty(task));
  else if (task.status === 'completed') io.stdout.write(pretty(task.result));
  else if (task.status === 'input_required') io.stdout.write(inputPrompt(task));
  else io.stderr.write(`${task.status}: ${task.error?.message ?? task.statusMessage}\n`);
  return exitCodeFor(task.status);
}

/** `--input` as JSON: inline, `@file`, or `-` for stdin. */
async function readJson(source: string, io: Io): Promise<unknown> {
  let text = source;
  if (source === '-') {
    text = '';
    for await (const chunk of io.stdin) text += chunk.toString();
  } else if (source.startsWith('@')) {
    text = await readFile(source.slice(1), 'utf8').catch((error: Error) => {
      throw new UsageError(`Cannot read ${source.slice(1)}: ${error.message}`);
    });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--input is not valid JSON: ${(error as Error).message}`);
  }
}

/** Prints an error for people (or as JSON) and picks the exit code. */
function report(error: unknown, io: Io, json: boolean): number {
  if (error instanceof UsageError) {
    io.stderr.write(`longrun: ${error.message}\nRun longrun --help for usage.\n`);
    return EXIT.error;
  }
  if (io.interrupt.aborted) {
    io.stderr.write('Interrupted\n');
    return EXIT.interrupted;
  }
  if (error instanceof LongrunError) {
    if (json) {
      const { status, type, title, detail, errors } = error;
      io.stderr.write(
        `${JSON.stringify({ ...error.problem, status, type, title, detail, errors })}\n`,
      );
    } else {
      // The headline, then one line per field (the error's message names them on one line).
      const { title, detail } = error;
      io.stderr.write(`longrun: ${detail ? `${title}: ${detail}` : title}\n`);
      for (const field of error.errors ?? []) {
        io.stderr.write(`  ${field.path}: ${field.message}\n`);
      }
    }
    return EXIT.error;
  }
  io.stderr.write(`longrun: ${error instanceof Error ? error.message : String(error)}\n`);
  return EXIT.error;
}
