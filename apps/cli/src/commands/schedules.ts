import { integer, UsageError } from '../args.js';
import { EXIT } from '../exit-codes.js';
import { describeSchedule, pretty, schedulesTable } from '../format.js';
import { readJson } from '../io.js';
import type { Command } from './command.js';

/** The `longrun schedules …` commands: create, list, get, delete. */
export const scheduleCommands = {
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
} satisfies Record<string, Command>;
