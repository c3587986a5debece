import type { Job } from 'bullmq';
import { z } from 'zod';
import type { JobContext } from '@longrun/core';
import type { TaskStore, TransitionOutcome } from '../task-store.js';
import type { FaultHooks } from '../fault-hooks.js';
import type { RunTask } from './job-data.js';
import { lazyDurableCalls, type durableCalls, type DurableRun } from './durable-context.js';
import { InputParked, parkRun, type RunControl } from './run-control.js';
import { parkJob } from './park-job.js';

/** What a handler's context needs of the run it belongs to. */
export interface ContextRun {
  readonly job: Job;
  readonly task: RunTask;
  readonly token: string | undefined;
  readonly control: RunControl;
  readonly store: TaskStore;
  /** Stops the deferred `running` mark; `true` if it was still to come. */
  stopMark(): boolean;
  /** Stops the run when a write finds its task gone or finished. */
  stopIfGone(outcome: TransitionOutcome): void;
  /** Test seam (`TaskWorkerOptions.faults`): none in production. */
  readonly faults?: FaultHooks | undefined;
}

/**
 * The context a handler gets: progress, input requests and the cancel signal of one run. Every
 * write is a lifecycle event on the task's record.
 */
export function createJobContext(run: DurableRun): JobContext {
  let asked = 0;
  const base: Omit<JobContext, keyof ReturnType<typeof durableCalls>> = {
    taskId: run.task.id,
    attempt: run.job.attemptsMade + 1,
    get signal() {
      return run.control.signal;
    },
    async progress(value, message) {
      // A stopped run (cancelled, timed out and perhaps retried elsewhere) writes nothing more.
      if (run.control.aborted) throw run.control.stoppedBy;
      // Progress before the running mark says `running` itself, unless it has a message.
      const markPending = run.stopMark();
      const statusMessage = message ?? (markPending ? 'running' : undefined);
      run.stopIfGone(
        await run.store.transition(run.task.id, 'progress', {
          progress: value,
          ...(statusMessage === undefined ? {} : { statusMessage }),
          started: true,
        }),
      );
    },
    async requestInput({ message, schema }) {
      // A stopped run (cancelled, or parked already: a caught park) asks nothing more.
      if (run.control.aborted) throw run.control.stoppedBy;
      run.stopMark();
      const index = asked++;
      await readAnswers(run);
      if (index < run.task.inputs.length) return schema.parse(run.task.inputs[index]);
      // Park first, then say so: once the record reads input_required the job is promotable. A
      // run that lost its job meanwhile writes nothing: the task is another run's now.
      if (!(await parkJob(run, run.task.expiresAt + 1000))) {
        throw parkRun(run.control, new InputParked());
      }
      run.faults?.afterPark?.();
      await run.store.transition(run.task.id, 'park', {
        statusMessage: message,
        awaitingInput: true,
        inputRequest: { message, schema: z.toJSONSchema(schema) as Record<string, unknown> },
      });
      throw parkRun(run.control, new InputParked());
    },
  };
  // Assigned, not spread: `signal` is a getter (an AbortController only when a handler reads it).
  return Object.assign(base, lazyDurableCalls(run));
}

/** A first run took its task from the job: read the answers before asking (a re-added job may
 * belong to a task that has some). */
async function readAnswers(run: ContextRun): Promise<void> {
  if (run.task.inputsRead) return;
  const record = await run.store.get(run.task.id);
  if (!record) {
    run.stopIfGone({ ok: false, reason: 'missing' });
    throw new Error('task is gone'); // aborted: the run ends as cancelled
  }
  run.task.inputs = record.inputs;
  run.task.inputsRead = true;
}
