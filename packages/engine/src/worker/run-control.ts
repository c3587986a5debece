/**
 * How a run is stopped: a cancel broadcast, or a write that finds the task gone or finished. The
 * handler's `AbortSignal` is made only when the handler reads `ctx.signal` (an `AbortController`
 * per job showed in the worker's profile, and a short handler never looks at it); one made after
 * the run was stopped is aborted already.
 */
export class RunControl {
  private controller?: AbortController;
  private reason?: Error;

  get aborted(): boolean {
    return this.reason !== undefined;
  }

  /** Why the run was stopped first (a cancel, the task gone, or `RunTimedOut`), if it was. */
  get stoppedBy(): Error | undefined {
    return this.reason;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.reason) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/** How long a cancel broadcast for a job this process has not (yet) started is remembered. */
const CANCEL_MEMORY_MS = 60_000;
const CANCEL_MEMORY_MAX = 10_000;

/**
 * The runs of one worker process, by task id, and the cancels broadcast for tasks no run here
 * had (yet): a job taken in the instant between the API's cancel and its broadcast would
 * otherwise start unchecked on the fast path.
 */
export class RunRegistry {
  private readonly running = new Map<string, RunControl>();
  private readonly cancelledLately = new Map<string, number>();

  /** Starts tracking a run of `taskId` (until `untrack` with the same control). */
  track(taskId: string, run: RunControl): void {
    this.running.set(taskId, run);
  }

  /** Stops tracking `run`, unless another run of `taskId` has taken its place since. */
  untrack(taskId: string, run: RunControl): void {
    if (this.running.get(taskId) === run) this.running.delete(taskId);
  }

  /** A cancel was broadcast: aborts the run here, or remembers it. `true` if a run was aborted. */
  cancel(taskId: string): boolean {
    const run = this.running.get(taskId);
    if (run) {
      run.abort(new Error('cancelled'));
      return true;
    }
    this.remember(taskId);
    return false;
  }

  /** Whether a cancel for `taskId` was broadcast lately while no run here had it. */
  wasCancelled(taskId: string): boolean {
    return this.cancelledLately.has(taskId);
  }

  /** Bounded: oldest first out after a minute, or past the cap. */
  private remember(taskId: string): void {
    const now = Date.now();
    for (const [id, at] of this.cancelledLately) {
      if (at > now - CANCEL_MEMORY_MS && this.cancelledLately.size < CANCEL_MEMORY_MAX) break;
      this.cancelledLately.delete(id);
    }
    this.cancelledLately.set(taskId, now);
  }
}

/** A run that took longer than its timeout: its signal aborts with this, and the run fails. */
export class RunTimedOut extends Error {
  override name = 'RunTimedOut';
  constructor(readonly timeoutMs: number) {
    super(`The run took longer than its ${timeoutMs} ms timeout`);
  }
}

/** Thrown by `ctx.requestInput` to park a job; the processor turns it into BullMQ's DelayedError. */
export class InputParked extends Error {
  override name = 'InputParked';
  constructor() {
    super('The run parked waiting for input: it resumes once the task is answered');
  }
}

/**
 * Thrown by a durable wait (a sleep, children, a waitpoint) once its job was moved to BullMQ's
 * delayed set: the run ends holding no slot; the processor turns it into BullMQ's DelayedError.
 */
export class RunParked extends Error {
  override name = 'RunParked';
  constructor() {
    super('The run parked on a durable wait: it resumes when the wait ends');
  }
}

/**
 * Ends the run as parked (issue 40): its job is in BullMQ's delayed set, so nothing the handler
 * does from here may count. The park is the run's stop (`RunControl.stoppedBy`, its signal aborts
 * with it), so a handler whose own `try/catch` swallows the signal is stopped at its next durable
 * call or progress (each throws it again), and whatever it returns or throws afterwards ends the
 * run as parked, not as completed or failed. Returns the signal to throw.
 */
export function parkRun<T extends RunParked | InputParked>(control: RunControl, parked: T): T {
  control.abort(parked);
  return parked;
}

/** The park that stopped the run, if one did (`parkRun`). */
export function parkedBy(control: RunControl): RunParked | InputParked | undefined {
  const stopped = control.stoppedBy;
  return stopped instanceof RunParked || stopped instanceof InputParked ? stopped : undefined;
}
