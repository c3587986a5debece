import { LongrunError } from '@longrun/client';
import { HELP, parse, UsageError, type CommandName } from './args.js';
import { scheduleCommands } from './commands/schedules.js';
import { taskCommands } from './commands/tasks.js';
import { typeCommands } from './commands/types.js';
import type { Command } from './commands/command.js';
import { clientFrom } from './connect.js';
import { EXIT } from './exit-codes.js';
import type { Io } from './io.js';

export type { Io } from './io.js';

/** Every command, by the name `args.ts` parses it with: one parsed and not run fails the build. */
const commands: Record<CommandName, Command> = {
  ...taskCommands,
  ...typeCommands,
  ...scheduleCommands,
};

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
