/** What the API puts in a job's data (older jobs carry only `tenant`/`requestId`). */
export interface TaskJobData {
  tenant?: string;
  requestId?: string;
  /** The task's input, so a first run needs no read of the record. */
  input?: Record<string, unknown>;
  /** When the task expires (ms since the epoch). */
  expiresAt?: number;
  /** The submit's own run timeout (ms), if it gave one. */
  timeoutMs?: number;
  /** The W3C `traceparent` of the submit's span: the parent of each run's span (decision 65). */
  traceparent?: string;
  /** A child task's parent (issue 29). */
  parent?: string;
}

/** What a run needs of its task. */
export interface RunTask {
  id: string;
  type: string;
  input: Record<string, unknown>;
  /** Answers to earlier `requestInput` calls, in order. */
  inputs: unknown[];
  /** Whether `inputs` came from the record (a first run starts without reading it). */
  inputsRead: boolean;
  expiresAt: number;
  /** The submit's own run timeout (ms), if it gave one; else the job type's applies. */
  timeoutMs?: number | undefined;
  /** The submit's span (`traceparent`), when the task was traced: its runs' parent. */
  traceparent?: string | undefined;
  /** The failed run before this retry (`traceparent`): this run's span links to it. */
  lastRunTrace?: string | undefined;
  /** This run's own span (`traceparent`), kept by a retry for the next run to link to. */
  runTrace?: string | undefined;
  /** The parent task to tell when this one ends (issue 29). */
  parentTaskId?: string | undefined;
  /**
   * Durable step results as read with the task (JSON by name); a first run has none (`NO_STEPS`,
   * shared: replaced by a map of its own before a step is kept in it).
   */
  steps: ReadonlyMap<string, string>;
  /** The name of the sleep the record shows `waiting` (issue 40), if any. */
  sleeping?: string | undefined;
  /** The task's tenant (a first run: the job's). */
  tenant?: string | undefined;
}

/** How one run of a job ended, for metrics and logs. */
export type RunOutcome =
  | 'completed'
  | 'failed'
  | 'retrying'
  | 'cancelled'
  | 'input_required'
  | 'skipped'
  /** Parked by a durable wait (a sleep, children, a waitpoint): issue 29. */
  | 'waiting'
  /** The run's job was another run's by the time it failed (its lock lapsed): nothing written. */
  | 'lost';

export interface TaskWorkerLogger {
  /** pino's: lets a run skip building log lines nobody will see. */
  isLevelEnabled?(level: string): boolean;
  debug?(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** The message of a run's last log line, by how it ended (others: `task run ended`). */
export const RUN_END_LINES: Partial<Record<RunOutcome, string>> = {
  completed: 'task completed',
  failed: 'task failed',
};
