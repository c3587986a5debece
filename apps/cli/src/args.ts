import { parseArgs } from 'node:util';

export const HELP = `longrun: submit, follow and answer longrun tasks

Usage
  longrun submit <type> [--input <json>] [--wait] [--idempotency-key <key>] [--ttl-ms <n>]
                [--delay-ms <n> | --run-at <iso>] [--run-timeout-ms <n>] [--tag <t>]...
  longrun get <id>              the task's handle
  longrun wait <id>             wait for it to finish (progress bar on a terminal)
  longrun result <id>           the outcome of a finished task
  longrun cancel <id>           stop it, wherever it runs
  longrun input <id> --input <json>
                                answer a task that asks for input
  longrun list [--status <s>] [--type <t>] [--tag <t>] [--schedule <id>] [--limit <n>]
               [--cursor <c>]
  longrun forget <id>           delete a finished task now
  longrun types                 the job types workers serve (0 workers: their tasks wait)
  longrun types --typescript [--out <file>]
                                their inputs as TypeScript, for createClient<LongrunJobTypes>()
  longrun schedules create <type> (--cron <pattern> [--tz <zone>] | --every-ms <n>)
                [--input <json>] [--ttl-ms <n>] [--run-timeout-ms <n>] [--idempotency-key <key>]
                                submit <type> on every tick, as your tenant; prints its id
  longrun schedules list        your schedules, with their next run
  longrun schedules get <id>    one schedule, with its next run and last task
  longrun schedules delete <id> stop it (the tasks it made stay)

Options
  --input <json>            job input or answer; @file reads a file, - reads stdin
  --wait                    (submit) wait for the task after submitting it
  --timeout-ms <n>          (submit --wait, wait) stop waiting after n ms (exit 5)
  --idempotency-key <key>   (submit) same key, same input: the same task, run once;
                            (schedules create) the same schedule, never a second
  --ttl-ms <n>              (submit, schedules create) keep the task this long after creation
  --delay-ms <n>            (submit) start it no sooner than n ms from now ("scheduled" until then)
  --run-at <iso>            (submit) start it no sooner than this time, e.g. 2026-12-24T08:00:00Z
  --run-timeout-ms <n>      (submit, schedules create) fail a run that takes longer (error.code "timeout");
                            not --timeout-ms, which bounds the wait
  --callback-url <url>      (submit) POST every status change to this URL
  --callback-secret <s>     (submit) sign those calls (HMAC-SHA256, 16+ characters)
  --status <s>              (list) working, input_required, completed, cancelled, failed
  --type <t>                (list) only tasks of this job type
  --schedule <id>           (list) only tasks made by this schedule
  --tag <t>                 (submit) label the task (repeat for up to 10 tags);
                            (list) only tasks carrying this tag
  --cron <pattern>          (schedules create) when to run, e.g. '*/15 * * * *' (6 fields: seconds first)
  --tz <zone>               (schedules create) the time zone --cron is read in (default UTC)
  --every-ms <n>            (schedules create) run every n ms instead (the first run at once)
  --limit <n>, --cursor <c> (list) page size (1-100) and the next page's cursor
  --typescript              (types) print the types as TypeScript instead of a table
  --out <file>              (types --typescript) write the module to this file, not stdout
  --json                    machine-readable JSON on stdout
  --url <url>               API base URL (env LONGRUN_URL; default http://localhost:3000)
  --api-key <key>           API key (env LONGRUN_API_KEY; prefer the variable)
  -h, --help                this help
  -v, --version             the CLI's version

Exit codes
  0  completed (or the command did what it was asked)
  1  failed            2  cancelled
  3  input required: answer with \`longrun input <id> --input '<json>'\`
  4  usage, connection or API error
  5  not finished yet (result of a working task, or --timeout-ms ran out)
  130 interrupted (Ctrl-C while waiting; the task goes on)

Example
  export LONGRUN_URL=http://localhost:3000 LONGRUN_API_KEY=dev-…
  longrun submit sleep --input '{"ms":5000}' --wait
  longrun schedules create echo --input '{"report":"daily"}' --cron '0 6 * * *'
`;

const OPTIONS = {
  input: { type: 'string' },
  wait: { type: 'boolean' },
  'timeout-ms': { type: 'string' },
  'idempotency-key': { type: 'string' },
  'ttl-ms': { type: 'string' },
  'delay-ms': { type: 'string' },
  'run-at': { type: 'string' },
  'run-timeout-ms': { type: 'string' },
  'callback-url': { type: 'string' },
  'callback-secret': { type: 'string' },
  status: { type: 'string' },
  type: { type: 'string' },
  schedule: { type: 'string' },
  tag: { type: 'string', multiple: true },
  cron: { type: 'string' },
  tz: { type: 'string' },
  'every-ms': { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  typescript: { type: 'boolean' },
  out: { type: 'string' },
  json: { type: 'boolean' },
  url: { type: 'string' },
  'api-key': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

type OptionName = keyof typeof OPTIONS;

const COMMON: OptionName[] = ['json', 'url', 'api-key', 'help'];

/** The options each command takes besides the common ones, and how many positionals. */
const COMMANDS = {
  submit: {
    args: ['type'],
    options: [
      'input',
      'wait',
      'timeout-ms',
      'idempotency-key',
      'ttl-ms',
      'delay-ms',
      'run-at',
      'run-timeout-ms',
      'callback-url',
      'callback-secret',
      'tag',
    ],
  },
  get: { args: ['id'], options: [] },
  wait: { args: ['id'], options: ['timeout-ms'] },
  result: { args: ['id'], options: [] },
  cancel: { args: ['id'], options: [] },
  input: { args: ['id'], options: ['input'] },
  list: { args: [], options: ['status', 'type', 'tag', 'schedule', 'limit', 'cursor'] },
  forget: { args: ['id'], options: [] },
  types: { args: [], options: ['typescript', 'out'] },
  'schedules create': {
    args: ['type'],
    options: ['input', 'cron', 'tz', 'every-ms', 'ttl-ms', 'run-timeout-ms', 'idempotency-key'],
  },
  'schedules list': { args: [], options: [] },
  'schedules get': { args: ['id'], options: [] },
  'schedules delete': { args: ['id'], options: [] },
} as const satisfies Record<string, { args: readonly string[]; options: readonly OptionName[] }>;

export type CommandName = keyof typeof COMMANDS;

export interface Values {
  input?: string;
  wait?: boolean;
  'timeout-ms'?: string;
  'idempotency-key'?: string;
  'ttl-ms'?: string;
  'delay-ms'?: string;
  'run-at'?: string;
  'run-timeout-ms'?: string;
  'callback-url'?: string;
  'callback-secret'?: string;
  status?: string;
  type?: string;
  schedule?: string;
  tag?: string[];
  cron?: string;
  tz?: string;
  'every-ms'?: string;
  limit?: string;
  cursor?: string;
  typescript?: boolean;
  out?: string;
  json?: boolean;
  url?: string;
  'api-key'?: string;
  help?: boolean;
  version?: boolean;
}

export type Parsed =
  | { kind: 'help'; asked: boolean }
  | { kind: 'version' }
  | { kind: 'command'; command: CommandName; arg: string | undefined; values: Values };

/** A mistake in how the CLI was called: printed with a pointer to `--help`, exit 4. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * parseArgs' complaint, in our words where its own are broken: node's unknown-option text ends
 * `as in '-- "--nope"` with a quote it never closes.
 * @example parseArgsMessage(unknownNope) // "Unknown option '--nope' (an argument starting with - goes after --, as in: -- --nope)"
 */
function parseArgsMessage(error: Error): string {
  const unknown = /^Unknown option '([^']*)'/.exec(error.message)?.[1];
  if (unknown === undefined) return error.message;
  return `Unknown option '${unknown}' (an argument starting with - goes after --, as in: -- ${unknown})`;
}

/**
 * Parses the command line (node:util parseArgs, strict), checking each command's options.
 * @example parse(['get', 'abc', '--json']) // { kind: 'command', command: 'get', arg: 'abc', … }
 */
export function parse(argv: string[]): Parsed {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseArgsMessage(error as Error));
  }
  const values = parsed.values as Values;
  const [first, ...rest] = parsed.positionals;
  if (values.version) return { kind: 'version' };
  if (values.help) return { kind: 'help', asked: true };
  if (first === undefined) return { kind: 'help', asked: false };
  // `schedules` takes a sub-command: `schedules create` etc. are commands of their own.
  let name = first;
  if (first === 'schedules') {
    const sub = rest.shift();
    if (sub === undefined || !Object.hasOwn(COMMANDS, `schedules ${sub}`)) {
      throw new UsageError('Usage: longrun schedules create|list|get|delete …');
    }
    name = `schedules ${sub}`;
  }
  if (!Object.hasOwn(COMMANDS, name)) throw new UsageError(`Unknown command "${name}"`);
  const command = name as CommandName;
  const spec = COMMANDS[command];
  const allowed = new Set<string>([...COMMON, ...spec.options]);
  for (const option of Object.keys(values)) {
    if (!allowed.has(option)) throw new UsageError(`${command} does not take --${option}`);
  }
  if (rest.length !== spec.args.length) {
    const expected = spec.args.map((a) => `<${a}>`).join(' ') || 'no arguments';
    throw new UsageError(`Usage: longrun ${command} ${expected}`);
  }
  if (command === 'input' && values.input === undefined) {
    throw new UsageError("input needs the answer: --input '<json>'");
  }
  if (values['timeout-ms'] !== undefined && command === 'submit' && !values.wait) {
    throw new UsageError('--timeout-ms only applies with --wait');
  }
  if (values.out !== undefined && !values.typescript) {
    throw new UsageError('--out only applies with --typescript');
  }
  if (
    command === 'schedules create' &&
    (values.cron === undefined) === (values['every-ms'] === undefined)
  ) {
    throw new UsageError('schedules create needs --cron <pattern> or --every-ms <n> (one of them)');
  }
  if (values.tz !== undefined && values.cron === undefined) {
    throw new UsageError('--tz only applies with --cron');
  }
  if (values.typescript && values.json) {
    throw new UsageError('--json and --typescript do not go together: pick one');
  }
  return { kind: 'command', command, arg: rest[0], values };
}

/**
 * A non-negative integer option, or a usage error naming it.
 * @example integer('50', 'limit') // 50
 */
export function integer(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}
