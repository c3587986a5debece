import type { RunOutcome } from '../worker/job-data.js';
import type { FinishOutcome } from './lease-runs.js';

// What a lease broker takes and answers (lease-broker.ts), apart from its workings.

/** What a broker reports, as an SDK worker's `onRun` and `onQueueWait` do (its metrics). */
export interface LeaseObserver {
  /** Called once per run, with how it ended and how long it took. */
  onRun(type: string, outcome: RunOutcome, durationMs: number): void;
  /** A first run's wait in the queue (from the submit, or the end of its delay). */
  onQueueWait(type: string, waitMs: number): void;
}

/** One job leased to an HTTP worker, as `POST /v1/worker/leases` lists it. */
export interface LeaseView {
  leaseId: string;
  taskId: string;
  type: string;
  input: Record<string, unknown>;
  attempt: number;
  /** The answer to the input the task asked for last, on the run after it was given. */
  answer?: unknown;
  leaseMs: number;
  traceparent?: string;
}

export type LeaseTakeOutcome =
  | {
      kind: 'ok';
      leases: LeaseView[];
      /** What became of each of the call's `completions`, in order (when it had some). */
      completions?: FinishOutcome[];
    }
  | { kind: 'unknownType'; name: string }
  /** A type another worker key (or SDK workers) owns (issue 41). */
  | { kind: 'owned'; name: string }
  | { kind: 'stopping' }; // the API is stopping and the call took nothing

/** A completion sent with a lease call (decision 68). */
export interface LeaseCompletion {
  leaseId: string;
  result: unknown;
}
