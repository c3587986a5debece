import type { TaskHandle } from '@longrun/core';

/** Where progress is shown: a terminal gets one live line, anything else plain lines. */
export interface ProgressView {
  update(task: TaskHandle): void;
  /** Clears the live line (if any); safe to call twice. */
  stop(): void;
}

export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

const SPINNER = ['|', '/', '-', '\\'];
const BAR_WIDTH = 24;

/**
 * A percentage from a handle's progress: a number is a percent; an object may carry `percent`,
 * or `current`/`done` of `total`. Undefined when there is none.
 * @example percentOf({ current: 3, total: 4 }) // 75
 */
export function percentOf(progress: TaskHandle['progress']): number | undefined {
  if (typeof progress === 'number') return clamp(progress);
  if (progress === undefined) return undefined;
  const { percent, current, done, total } = progress as Record<string, unknown>;
  if (typeof percent === 'number') return clamp(percent);
  const part = typeof current === 'number' ? current : done;
  if (typeof part === 'number' && typeof total === 'number' && total > 0) {
    return clamp((part / total) * 100);
  }
  return undefined;
}

function clamp(percent: number): number {
  return Number.isFinite(percent) ? Math.min(100, Math.max(0, percent)) : 0;
}

/**
 * `[#########---------------]  40%`
 * @example bar(50) // '[############------------]  50%'
 */
export function bar(percent: number): string {
  const filled = Math.round((percent / 100) * BAR_WIDTH);
  const label = `${Math.floor(percent)}%`.padStart(4);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${label}`;
}

/** The text after the bar: the status message, or the progress object when it has no percent. */
function detail(task: TaskHandle): string {
  const extra =
    percentOf(task.progress) === undefined && typeof task.progress === 'object'
      ? JSON.stringify(task.progress)
      : '';
  return [task.statusMessage, extra].filter(Boolean).join(' ');
}

/** One line per change, for logs and pipes: `working  40% slept 2000 of 5000 ms`. */
export class PlainProgress implements ProgressView {
  private last = '';

  constructor(private readonly out: Output) {}

  update(task: TaskHandle): void {
    const percent = percentOf(task.progress);
    const line = [
      task.status,
      percent === undefined ? '' : `${Math.floor(percent)}%`.padStart(4),
      detail(task),
    ]
      .filter(Boolean)
      .join(' ');
    if (line === this.last) return;
    this.last = line;
    this.out.write(`${line}\n`);
  }

  stop(): void {}
}

/**
 * A spinner and a progress bar redrawn in place on a terminal:
 * `/ sleep 8b7c2f0e working [#####-------]  40% slept 2000 of 5000 ms  3s`.
 */
export class LiveProgress implements ProgressView {
  private task: TaskHandle | undefined;
  private frame = 0;
  private readonly started = Date.now();
  private readonly timer: ReturnType<typeof setInterval>;
  private stopped = false;

  constructor(
    private readonly out: Output,
    private readonly label: string,
  ) {
    this.out.write('\x1b[?25l'); // hide the cursor while the line is redrawn
    this.timer = setInterval(() => this.render(), 100);
    this.timer.unref();
    this.render();
  }

  update(task: TaskHandle): void {
    this.task = task;
    this.render();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.out.write('\r\x1b[2K\x1b[?25h');
  }

  private render(): void {
    if (this.stopped) return;
    const spinner = SPINNER[this.frame++ % SPINNER.length];
    const task = this.task;
    const percent = task ? percentOf(task.progress) : undefined;
    const elapsed = `${Math.floor((Date.now() - this.started) / 1000)}s`;
    const parts = [
      spinner,
      this.label,
      task?.status ?? 'connecting',
      percent === undefined ? '' : bar(percent),
      task ? detail(task) : '',
      elapsed,
    ].filter(Boolean);
    // Never wider than the terminal: a wrapped line cannot be redrawn in place.
    const width = Math.max(20, (this.out.columns ?? 80) - 1);
    let line = parts.join(' ');
    if (line.length > width) line = `${line.slice(0, width - 1)}…`;
    this.out.write(`\r\x1b[2K${line}`);
  }
}

/** A live view on a terminal (unless TERM=dumb), plain lines elsewhere, or nothing. */
export function progressView(
  out: Output,
  label: string,
  opts: { quiet: boolean; env: Record<string, string | undefined> },
): ProgressView {
  if (out.isTTY && opts.env.TERM !== 'dumb') return new LiveProgress(out, label);
  if (opts.quiet) return { update() {}, stop() {} };
  return new PlainProgress(out);
}
