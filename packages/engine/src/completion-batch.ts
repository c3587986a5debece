import type { TaskStore, TransitionOutcome } from './task-store.js';
import type { PendingCall } from './turn-batch.js';

/** A completion on its way: `written` once it is on the connection, `outcome` once answered. */
export type PendingCompletion = PendingCall<TransitionOutcome>;

/** Who hears how a completion ended: the guarded outcome, or the error of its call. */
export interface CompletionSink {
  completionAnswered(outcome: TransitionOutcome): void;
  completionFailed(error: unknown): void;
}

interface Completion {
  id: string;
  /** The result as JSON (the run has it already: its size was checked). */
  json: string;
  /** The result itself, for a lone completion (the transition script encodes it as it always did). */
  value: unknown;
  sink: CompletionSink;
}

/** A promise and its resolve, made once per call, not per completion. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * The completions asked for during one turn of the event loop, sent as one script call
 * (`TaskStore.completeMany`) at the end of the turn (`setImmediate`), at most `maxBatch` a call: a
 * worker running many jobs finishes several per turn, and each call costs a socket write and a
 * script start on both sides. A lone completion goes out as the plain transition script. If a
 * call fails, each of its completions is sent again on its own, so one bad task fails alone (a
 * completion is guarded, so sending it twice is harmless).
 *
 * Two ways in: `complete` gives promises (`written`, `outcome`); `completeJson` (the SDK's runs,
 * thousands a second) takes the result's JSON and a sink to call, and shares one `written`
 * promise among the completions of a turn, so a completion costs no promise of its own.
 */
export class CompletionBatch {
  private pending: Completion[] = [];
  private written: ReturnType<typeof signal> | undefined;

  constructor(
    private readonly store: TaskStore,
    private readonly maxBatch = 100,
  ) {}

  /** Completes `id` with `result` (the `complete` event); the outcome `transition` would give. */
  complete(id: string, result: unknown): PendingCompletion {
    let sink!: CompletionSink;
    const outcome = new Promise<TransitionOutcome>((resolve, reject) => {
      sink = { completionAnswered: resolve, completionFailed: reject };
    });
    // Marked as handled: a caller may attach its own handler a turn later (after waiting for
    // `written`), and a failure seen by nobody must not end the process.
    outcome.catch(() => undefined);
    let json: string;
    try {
      json = JSON.stringify(result ?? null) ?? 'null';
    } catch (error) {
      sink.completionFailed(error); // not JSON: this completion fails, nothing is sent
      return { written: Promise.resolve(), outcome };
    }
    return { written: this.completeJson(id, json, sink, result ?? null), outcome };
  }

  /**
   * Queues the completion of `id` with `value`, whose JSON is `json`; `sink` hears the outcome.
   * Resolves once the call carrying it has been handed to the connection (sent, queued while
   * reconnecting, or refused at once, which the sink then hears): any command sent on the same
   * connection after that runs after it in Redis.
   */
  completeJson(id: string, json: string, sink: CompletionSink, value: unknown): Promise<void> {
    this.pending.push({ id, json, value, sink });
    if (!this.written) {
      this.written = signal();
      setImmediate(this.flush);
    }
    return this.written.promise;
  }

  private readonly flush = (): void => {
    const written = this.written!;
    this.written = undefined;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      let sent: Promise<TransitionOutcome[]>;
      try {
        sent = this.send(batch);
      } catch (error) {
        sent = Promise.reject(error); // a call that could not even be built fails its items only
      }
      sent.then(
        (outcomes) => {
          for (let i = 0; i < batch.length; i++) batch[i]!.sink.completionAnswered(outcomes[i]!);
        },
        (error: unknown) => this.failed(batch, error),
      );
    }
    // The calls above wrote their commands (ioredis sends synchronously, or queues offline).
    written.resolve();
  };

  private send(items: Completion[]): Promise<TransitionOutcome[]> {
    return items.length === 1
      ? this.one(items[0]!).then((outcome) => [outcome])
      : this.store.completeMany(items);
  }

  private failed(batch: Completion[], error: unknown): void {
    if (batch.length === 1) {
      batch[0]!.sink.completionFailed(error);
      return;
    }
    // One bad moment must not fail every job of the batch: each goes again on its own.
    for (const c of batch) {
      this.one(c).then(
        (outcome) => c.sink.completionAnswered(outcome),
        (err: unknown) => c.sink.completionFailed(err),
      );
    }
  }

  private one(c: Completion): Promise<TransitionOutcome> {
    return this.store.transition(c.id, 'complete', { result: c.value });
  }
}
