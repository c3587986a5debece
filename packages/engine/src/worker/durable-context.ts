import {
  DurableTaskError,
  type ChildOutcome,
  type ChildTaskRequest,
  type JobContext,
  type Jsonified,
  type Waitpoint,
} from '@longrun/core';
import type { DurableStore, StepWrite } from '../durable-store.js';
import type { DurableHost } from './durable-host.js';
import { encodeStepResult, sleepEnd } from './durable-values.js';
import type { ContextRun } from './job-context.js';
import { awaitChildren } from './durable-children.js';
import { EXPIRY_WAKE_MS, keepPastExpiry } from './expiry.js';
import { parkJob } from './park-job.js';
import { parkRun, RunParked } from './run-control.js';
import { refusal } from './step-refusal.js';
import { NO_STEPS } from './take-task.js';

/** Codes of durable errors that fail the task at once, whatever attempts are left. */
export const FATAL_DURABLE_CODES: ReadonlySet<string> = new Set([
  'step-name-repeated',
  'step-name-invalid',
  'step-result-too-large',
  'step-result-not-json',
  'children-unavailable',
  'child-invalid',
  'durable-calls-overlap',
  'sleep-past-expiry',
  'sleep-invalid',
  // The children's outcomes are recorded: every later attempt would replay the same failure.
  'child-failed',
  'too-many-steps',
]);

export interface DurableRun extends ContextRun {
  readonly durable: DurableStore;
  readonly host: DurableHost | undefined;
  readonly maxResultBytes: number;
  /**
   * How long a task that ends `expired` stays readable (`LONGRUN_EXPIRED_GRACE_MS`): a wait that
   * may last to the task's expiry keeps its record that much longer, so that the run woken there
   * finds it and ends it (issue 40).
   */
  readonly expiredGraceMs: number;
  /** The most `ctx.step` calls a task records (`LONGRUN_MAX_STEPS`; 0: no cap). */
  readonly maxSteps: number;
}

type DurableCalls = Pick<
  JobContext,
  'step' | 'sleep' | 'sleepUntil' | 'runTask' | 'runTasks' | 'createWaitpoint' | 'waitFor'
>;

/**
 * The durable calls of a handler's context, made only when the handler first uses one: most runs
 * make none, and each run's set of them (its state and a dozen closures) showed in the worker's
 * allocations (decision 70). The same functions as `durableCalls` gives, as own properties.
 */
export function lazyDurableCalls(run: DurableRun): DurableCalls {
  let made: DurableCalls | undefined;
  const calls = (): DurableCalls => (made ??= durableCalls(run));
  return {
    step: ((...args: Parameters<DurableCalls['step']>) =>
      calls().step(...args)) as DurableCalls['step'],
    sleep: (ms) => calls().sleep(ms),
    sleepUntil: (date) => calls().sleepUntil(date),
    runTask: ((...args: Parameters<DurableCalls['runTask']>) =>
      calls().runTask(...args)) as DurableCalls['runTask'],
    runTasks: ((...args: Parameters<DurableCalls['runTasks']>) =>
      calls().runTasks(...args)) as DurableCalls['runTasks'],
    createWaitpoint: ((...args: Parameters<DurableCalls['createWaitpoint']>) =>
      calls().createWaitpoint(...args)) as DurableCalls['createWaitpoint'],
    waitFor: ((...args: Parameters<DurableCalls['waitFor']>) =>
      calls().waitFor(...args)) as DurableCalls['waitFor'],
  };
}

/**
 * The durable calls of a handler's context (issue 29). Each is a step of the task, named by the
 * handler (`step`) or by its order among calls of its kind (`$sleep:1`, `$children:1`,
 * `$waitpoint:1`): a later run replays the results recorded (read with the task) without calling
 * anything, so names and order must be the same on every run.
 */
export function durableCalls(run: DurableRun): DurableCalls {
  const seen = new Set<string>();
  const counts = { sleep: 0, children: 0, waitpoint: 0 };
  let busy = false;
  const id = run.task.id;
  /** The sleep recorded `waiting` and not yet ended (issue 40), by name. */
  let openSleep = run.task.sleeping;

  /** One durable call at a time: two at once would race for the same slot and names. */
  async function exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (busy) {
      throw new DurableTaskError(
        'durable-calls-overlap',
        'Durable calls (step, sleep, runTask, waitFor…) must be awaited one at a time',
      );
    }
    if (run.control.aborted) throw run.control.stoppedBy;
    busy = true;
    try {
      return await work();
    } finally {
      busy = false;
    }
  }

  /** The step's stored result, or `fn`'s, recorded once (one round trip). */
  async function step<T>(
    name: string,
    fn: () => Promise<T> | T,
    write: Partial<StepWrite> | ((value: T) => Partial<StepWrite>) = {},
  ) {
    const stored = run.task.steps.get(name);
    if (stored !== undefined) return JSON.parse(stored) as Jsonified<T>;
    const value = await fn();
    if (run.control.aborted) throw run.control.stoppedBy;
    const json = encodeStepResult(name, value, run.maxResultBytes);
    const extra = typeof write === 'function' ? write(value) : write;
    const maxBytes = (await run.host?.storageBudget?.()) ?? 0;
    const outcome = await run.durable.recordStep(id, {
      ...extra,
      name,
      value: json,
      maxSteps: run.maxSteps,
      maxBytes,
    });
    if (outcome.kind === 'tooMany' || outcome.kind === 'overBudget') throw refusal(name, outcome);
    if (outcome.kind === 'missing' || outcome.kind === 'refused') {
      run.stopIfGone(
        outcome.kind === 'missing'
          ? { ok: false, reason: 'missing' }
          : { ok: false, reason: 'refused', current: outcome.current },
      );
      throw (
        run.control.stoppedBy ??
        new Error(`task is ${outcome.kind === 'refused' ? outcome.current : 'gone'}`)
      );
    }
    const kept = outcome.kind === 'exists' ? outcome.value : json;
    // A first run shares the empty NO_STEPS: it gets a map of its own at its first step.
    if (run.task.steps === NO_STEPS) run.task.steps = new Map([[name, kept]]);
    else (run.task.steps as Map<string, string>).set(name, kept);
    return JSON.parse(kept) as Jsonified<T>;
  }

  /** Ends the run: the job waits in BullMQ's delayed set until `until` (or a wake-up). */
  async function park(until: number): Promise<never> {
    await moveToDelayed(until);
    throw parkRun(run.control, new RunParked());
  }

  /** Moves the job to BullMQ's delayed set; `false` when the run lost it (`parkJob`). */
  const moveToDelayed = (until: number): Promise<boolean> => parkJob(run, until);

  /**
   * Says what the task waits for, once parked; wakes its own job if that came already. A wait
   * that may last to the task's expiry wakes there and keeps the record past it, so the run
   * woken then ends the task `expired` instead of finding it gone (`TaskRun.execute`).
   */
  async function parkOn(until: number, write: Pick<StepWrite, 'wait' | 'message'>) {
    await keepPastExpiry(run, until);
    if (!(await moveToDelayed(until))) throw parkRun(run.control, new RunParked());
    const outcome = await run.durable.recordStep(id, { name: '', value: '', ...write });
    if (outcome.kind === 'ok' && outcome.ready) await run.job.promote().catch(() => undefined);
    throw parkRun(run.control, new RunParked());
  }

  async function sleepUntil(date: Date | number): Promise<void> {
    const wanted = sleepEnd(typeof date === 'number' ? date : date.getTime());

    await exclusive(async () => {
      const name = `$sleep:${++counts.sleep}`;
      // Checked when first recorded only: a replay's `wanted` is from its own clock.
      const first = () => {
        if (wanted < run.task.expiresAt) return { until: wanted };
        throw new DurableTaskError(
          'sleep-past-expiry',
          `The task expires at ${new Date(run.task.expiresAt).toISOString()}, before the sleep would end: submit it with a longer ttlMs`,
        );
      };
      // Shown `waiting` until it ends (a sleep already over is recorded completed).
      const waits = !run.task.steps.has(name) && wanted > Date.now();
      const { until } = await step(name, first, {
        ...(waits ? { sleepUntil: wanted } : {}),
        message: `sleeping until ${new Date(wanted).toISOString()}`,
      });
      if (waits) openSleep = name;
      if (Date.now() < until) await park(until);
      if (openSleep === name) {
        // Going on past it: its entry is completed now, when it really ended.
        await run.durable.recordStep(id, { name: '', value: '', ended: name });
        openSleep = undefined;
      }
    });
  }

  async function runTasks(
    tasks: readonly ChildTaskRequest[],
    opts: { failOnChildFailure?: boolean } = {},
  ): Promise<ChildOutcome[]> {
    return exclusive(async () => {
      const host = run.host;
      if (!host) {
        throw new DurableTaskError('children-unavailable', 'This worker cannot make child tasks');
      }
      const name = `$children:${++counts.children}`;
      const replayed = run.task.steps.has(name);
      const tenant = run.task.tenant ?? '';
      const ids = await step(
        name,
        () => host.createChildren(tenant, id, tasks, name, run.control.signal),
        // The children are on the parent already, recorded as they were made (note-children).
        (made) => ({ message: `started ${made.length} child task${made.length === 1 ? '' : 's'}` }),
      );
      await awaitChildren(run, host, ids, replayed);
      await run.durable.recordStep(id, { name: '', value: '', wait: '' });
      const outcomes = (await host.childOutcomes(ids)).map(
        (o, i): ChildOutcome =>
          o ?? {
            taskId: ids[i]!,
            status: 'failed',
            error: { message: 'The child task is gone', code: 'child-gone' },
          },
      );
      const failed = outcomes.find((o) => o.status !== 'completed');
      if (failed && opts.failOnChildFailure) {
        throw new DurableTaskError(
          'child-failed',
          `Child task ${failed.taskId} ${failed.status}: ${failed.error?.message ?? ''}`,
        );
      }
      return outcomes;
    });
  }

  return {
    step: (name, fn) =>
      exclusive(() => {
        if (typeof name !== 'string' || name === '' || name.startsWith('$') || name.length > 200) {
          throw new DurableTaskError(
            'step-name-invalid',
            'A step name is a non-empty string of at most 200 characters, not starting with "$"',
          );
        }
        if (seen.has(name)) {
          throw new DurableTaskError(
            'step-name-repeated',
            `The step name "${name}" was used twice in this task: step names must be unique`,
          );
        }
        seen.add(name);
        return step(name, fn, { message: `step ${name} completed` });
      }),
    sleep: (ms) => sleepUntil(Date.now() + ms),
    sleepUntil,
    runTasks,
    runTask: async (type, input, opts = {}) => {
      const { failOnChildFailure, ...child } = opts;
      return (await runTasks([{ type, input, ...child }], { failOnChildFailure }))[0]!;
    },
    createWaitpoint: ({ timeoutMs } = {}) =>
      exclusive(() => {
        const n = ++counts.waitpoint;
        const wpId = `${id}.${n}`;
        const expiresAt = Math.min(
          run.task.expiresAt,
          timeoutMs === undefined ? Infinity : Date.now() + timeoutMs,
        );
        const made: Waitpoint = { id: wpId, url: `/v1/waitpoints/${wpId}`, expiresAt };
        return step(`$waitpoint:${n}`, () => made, { message: `waitpoint ${wpId} created` });
      }),
    waitFor: (wp) =>
      exclusive(async () => {
        const n = Number(wp.id.slice(wp.id.lastIndexOf('.') + 1));
        const name = `$waitpoint:${n}`;
        if (!wp.id.startsWith(`${id}.`) || !run.task.steps.has(name)) {
          throw new DurableTaskError('waitpoint-unknown', `Not a waitpoint of this task: ${wp.id}`);
        }
        // One outcome, ever (issue 40): the data, or the timeout recorded like a step.
        const data = run.task.steps.get(`${name}:data`);
        if (data !== undefined) return JSON.parse(data) as unknown;
        const timedOut = () =>
          new DurableTaskError('waitpoint-timeout', `Waitpoint ${wp.id} timed out`);
        if (run.task.steps.has(`${name}:timeout`)) throw timedOut();
        if (Date.now() >= wp.expiresAt) {
          const outcome = await run.durable.timeOutWaitpoint(
            id,
            name,
            `waitpoint ${wp.id} timed out`,
          );
          if (outcome.kind === 'completed') return JSON.parse(outcome.data) as unknown;
          if (outcome.kind !== 'ok') {
            run.stopIfGone(
              outcome.kind === 'missing'
                ? { ok: false, reason: 'missing' }
                : { ok: false, reason: 'refused', current: outcome.current },
            );
            throw run.control.stoppedBy ?? new Error(`task is ${outcome.kind}`);
          }
          throw timedOut();
        }
        // A waitpoint without a timeout waits to the task's expiry: the run woken there ends
        // the task `expired` (TaskRun.execute).
        return parkOn(Math.min(wp.expiresAt, run.task.expiresAt - EXPIRY_WAKE_MS), {
          wait: `wp:${name}`,
          message: `waiting for waitpoint ${wp.id}`,
        });
      }),
  };
}
