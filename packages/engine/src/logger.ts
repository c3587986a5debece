import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { PrettyOptions } from 'pino-pretty';
import { activeTracer, traceLogFields } from './tracing/tracer.js';

/** pino-pretty, loaded only when a terminal asks for it (never in production). */
const prettyFactory = (options: PrettyOptions): ((line: string) => string) =>
  (createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty')).prettyFactory(
    options,
  );

/** `auto`: readable lines on a terminal outside production, JSON otherwise. */
export type LogFormat = 'auto' | 'json' | 'pretty';

export interface LoggerOptions {
  /** The process, e.g. `api` or `worker`: pino's `name` is `longrun-<process>`. */
  process: string;
  level?: string | undefined;
  format?: LogFormat | undefined;
  /** Default: `process.env.NODE_ENV`. */
  nodeEnv?: string | undefined;
  /** Where lines go (default: stdout). */
  stream?: (DestinationStream & { isTTY?: boolean }) | undefined;
}

/** The format `auto` means for this output: pretty only on a terminal and not in production. */
export function resolveLogFormat(
  format: LogFormat,
  isTTY: boolean,
  nodeEnv: string | undefined,
): 'json' | 'pretty' {
  if (format !== 'auto') return format;
  return isTTY && nodeEnv !== 'production' ? 'pretty' : 'json';
}

const TAG_COLOURS: Record<string, string> = { api: '36', worker: '35' }; // cyan, magenta

/**
 * The logger of a longrun process. JSON lines (pino) for log collectors; on a terminal, readable
 * lines (pino-pretty) that start with the process's name, so the API's and a worker's lines
 * interleaved by `npm start` can be told apart:
 *
 *     api    | 08:10:11.204 INFO: listening {"port":3000}
 */
export function createLogger(opts: LoggerOptions): Logger {
  const out = opts.stream ?? process.stdout;
  // `trace_id`/`span_id` on the lines logged inside a span, when an OpenTelemetry SDK was
  // registered before the logger was made (the apps do so first); else no mixin, no cost.
  const base = {
    name: `longrun-${opts.process}`,
    level: opts.level ?? 'info',
    ...(activeTracer() ? { mixin: traceLogFields } : {}),
  };
  const isTTY = Boolean(out.isTTY);
  if (
    resolveLogFormat(opts.format ?? 'auto', isTTY, opts.nodeEnv ?? process.env.NODE_ENV) === 'json'
  ) {
    return opts.stream ? pino(base, opts.stream) : pino(base);
  }
  const colour = isTTY && !process.env.NO_COLOR;
  const pretty = prettyFactory({
    colorize: colour,
    ignore: 'pid,hostname,name',
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
  });
  const name = opts.process.padEnd(6);
  const tag = colour
    ? `\u001b[${TAG_COLOURS[opts.process] ?? '33'}m${name}\u001b[0m |`
    : `${name} |`;
  return pino(base, { write: (line: string) => void out.write(`${tag} ${pretty(line)}`) });
}
