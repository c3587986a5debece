import { classifyRedisError, StoreFullError, StoreUnavailableError } from './errors.js';
import type { TaskWorkerLogger } from './worker/job-data.js';

export interface FailureLogOptions {
  /** A kind of failure is written at most once per this many ms (default 30 s). */
  intervalMs?: number | undefined;
  /** The clock (tests). */
  now?: (() => number) | undefined;
}

/** What the log keeps of one kind of failure. */
interface Kind {
  loggedAt: number;
  /** Lines of this kind held back since it was last written. */
  suppressed: number;
}

/** Kinds remembered at most (a bound, not a limit anyone should reach: kinds are few). */
const MAX_KINDS = 1000;

/**
 * Whether `err` says a dependency failed (Redis away, loading, read-only, full, or its data gone:
 * `NOGROUP`) rather than that the code is wrong. Takes an `Error` or the message of one.
 */
export function isDependencyError(err: unknown): boolean {
  const error = typeof err === 'string' ? new Error(err) : err;
  if (!(error instanceof Error)) return false;
  if (/^NOGROUP\b/.test(error.message)) return true;
  const classified = classifyRedisError(error);
  return classified instanceof StoreUnavailableError || classified instanceof StoreFullError;
}

/** An error's kind: its code, else its message with the numbers (ports, ids, times) taken out. */
function kindOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const message = typeof err === 'string' ? err : err instanceof Error ? err.message : String(err);
  return message.replace(/\d+/g, '#').slice(0, 120);
}

/**
 * A logger for a process that depends on Redis: while Redis is away every retry loop, BullMQ
 * worker and connection reports the same failure again and again (about 700 lines a minute, with
 * stack traces, before this existed). A warning or error whose `err` is a dependency failure is
 * written once per kind (the line's message and the error's code or text) per interval, as its
 * message only (no stack: the stack of a refused connection says nothing), with `suppressed`: how
 * many like it were held back since. Every other line goes through as it is. `restored` writes
 * one line when the dependency answers again.
 * @example
 * const logger = new FailureLog(createLogger({ process: 'worker' }));
 * redis.on('error', (err) => logger.warn({ err }, 'redis connection error'));
 * redis.on('ready', () => logger.restored({}, 'redis connection restored'));
 */
export class FailureLog implements TaskWorkerLogger {
  private readonly kinds = new Map<string, Kind>();
  private readonly intervalMs: number;
  private readonly now: () => number;
  /** A failure was written or held back since the last `restored` line. */
  private failing = false;

  constructor(
    private readonly logger: TaskWorkerLogger,
    opts: FailureLogOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 30_000;
    this.now = opts.now ?? Date.now;
  }

  isLevelEnabled(level: string): boolean {
    return this.logger.isLevelEnabled?.(level) ?? true;
  }

  debug(obj: object, msg?: string): void {
    this.logger.debug?.(obj, msg);
  }

  info(obj: object, msg?: string): void {
    this.logger.info(obj, msg);
  }

  warn(obj: object, msg?: string): void {
    this.write('warn', obj, msg);
  }

  error(obj: object, msg?: string): void {
    this.write('error', obj, msg);
  }

  /**
   * Says once that the dependency answers again (after failures only; every connection of the
   * process may call it), with how many failure lines were held back in all.
   */
  restored(obj: object, msg: string): void {
    if (!this.failing) return;
    this.failing = false;
    let suppressed = 0;
    for (const kind of this.kinds.values()) {
      suppressed += kind.suppressed;
      kind.suppressed = 0;
    }
    this.logger.info({ ...obj, suppressed }, msg);
  }

  private write(level: 'warn' | 'error', obj: object, msg: string | undefined): void {
    const err = (obj as { err?: unknown }).err;
    if (!isDependencyError(err)) {
      this.logger[level](obj, msg);
      return;
    }
    this.failing = true;
    const key = `${msg ?? ''}\u0000${kindOf(err)}`;
    const now = this.now();
    const seen = this.kinds.get(key);
    if (seen && now - seen.loggedAt < this.intervalMs) {
      seen.suppressed += 1;
      return;
    }
    if (!seen && this.kinds.size >= MAX_KINDS) {
      this.kinds.delete(this.kinds.keys().next().value as string);
    }
    this.kinds.delete(key); // re-inserted last: the map stays in order of last write
    this.kinds.set(key, { loggedAt: now, suppressed: 0 });
    const code = (err as { code?: unknown } | null)?.code;
    const line = {
      ...obj,
      err: err instanceof Error ? err.message : String(err),
      ...(typeof code === 'string' ? { code } : {}),
      ...(seen?.suppressed ? { suppressed: seen.suppressed } : {}),
    };
    this.logger[level](line, msg);
  }
}
