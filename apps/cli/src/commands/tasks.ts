import {
  isTerminal,
  LongrunError,
  TASK_STATUSES,
  type LongrunClient,
  type TaskHandle,
  type TaskStatus,
} from '@longrun/client';
import { integer, UsageError, type Values } from '../args.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { follow } from '../follow.js';
import { describe, inputPrompt, pretty, table } from '../format.js';
import { readJson, type Io } from '../io.js';
import { progressView } from '../progress.js';
import type { Command } from './command.js';

/** The commands on tasks: submit, get, wait, result, cancel, input, list, forget. */
export const taskCommands = {
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
      ...(values.tag ? { tags: values.tag } : {}),
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
    if ((values.tag?.length ?? 0) > 1) throw new UsageError('list takes one --tag');
    const list = await client.list({
      status: status as TaskStatus | undefined,
      type: values.type,
      scheduleId: values.schedule,
      tag: values.tag?.[0],
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
} satisfies Record<string, Command>;

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
