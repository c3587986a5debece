import { isTerminal, type TaskHandle } from '@longrun/core';
import type { TaskEngine } from '@longrun/engine';
import { submitError, type RpcError } from './errors.js';
import { handleResult } from './follow-views.js';
import type { AskOutcome } from './plain-input.js';
import { followTask } from './task-follow.js';
import { toolResultOf, type ToolResult } from './task-views.js';
import { toolNamed } from './tools.js';

/** What a job-type tool called without Tasks answers. */
export type PlainCallOutcome =
  | { kind: 'result'; result: ToolResult }
  /** The engine created nothing (bad arguments, a cap): the fields or the limit named. */
  | { kind: 'refused'; error: RpcError }
  | { kind: 'unknown' };

export interface PlainCallContext {
  requestId?: string | undefined;
  /** The call's `_meta.traceparent` (W3C): the parent of the submit's span (decision 65). */
  traceparent?: string | undefined;
  /** Aborted when the client is gone: a short tool's wait ends and its task is cancelled. */
  signal: AbortSignal;
  /** Each handle seen while a short tool's call waits (progress notifications). */
  onUpdate?: ((handle: TaskHandle) => void) | undefined;
  /**
   * Asks the client for a short task's open input request on the call's stream (a client that
   * declared form elicitation: `askForInput`); unset, the call waits for an answer from elsewhere.
   */
  askInput?: ((handle: TaskHandle) => Promise<AskOutcome>) | undefined;
}

/**
 * A `tools/call` of a job type without Tasks (no `params.task`, or a V2 client without the
 * extension), the same for both generations. A short tool (its runs bounded: `plainWaitMs`)
 * answers its result in the call, and past its bound, or once the client is gone, its task is
 * cancelled. A long tool answers at once with the handle as a tool result, which the follow
 * tools (`longrun_get_task`, …) follow (issue 32): no client is left without a way to run it.
 * @example await plainCall(engine, 'acme', 'sleep', { ms: 60_000 }, { signal })
 */
export async function plainCall(
  engine: TaskEngine,
  tenant: string,
  name: string,
  input: unknown,
  ctx: PlainCallContext,
): Promise<PlainCallOutcome> {
  // A worker may have registered the type a moment ago: read the registry before refusing.
  const tool = toolNamed(engine.knownJobTypes, name) ?? toolNamed(await engine.jobTypes(), name);
  if (!tool) return { kind: 'unknown' };
  const submitted = await engine.submit(
    tenant,
    { type: name, input: input ?? {} },
    { requestId: ctx.requestId, traceparent: ctx.traceparent },
  );
  if (submitted.kind !== 'created' && submitted.kind !== 'replayed') {
    return { kind: 'refused', error: submitError(submitted) };
  }
  const task = submitted.task;
  const waitMs = tool.plainWaitMs;
  if (waitMs === undefined)
    return { kind: 'result', result: handleResult(task, { started: true }) };
  await waitForEnd(engine, tenant, task.taskId, waitMs, ctx);
  const finished = await engine.result(tenant, task.taskId);
  if (finished.kind === 'finished')
    return { kind: 'result', result: toolResultOf(finished.result) };
  await engine.cancel(tenant, task.taskId);
  return {
    kind: 'result',
    result: toolResultOf({
      status: 'cancelled',
      error: { message: `The tool did not finish within ${waitMs} ms and was cancelled` },
    }),
  };
}

/**
 * Follows a short task until it ends or `waitMs` of its running has passed. With `askInput`,
 * each input request it makes is asked of the client in the call, and the time a person takes
 * to answer does not count against the bound (it bounds the run, not the answer).
 */
async function waitForEnd(
  engine: TaskEngine,
  tenant: string,
  taskId: string,
  waitMs: number,
  ctx: PlainCallContext,
): Promise<void> {
  let askInput = ctx.askInput;
  let deadline = Date.now() + waitMs;
  for (;;) {
    const handle = await followTask(engine, tenant, taskId, {
      waitMs: Math.max(0, deadline - Date.now()),
      untilStatusChange: false,
      untilInput: askInput !== undefined,
      signal: ctx.signal,
      onUpdate: ctx.onUpdate,
    });
    if (!handle || isTerminal(handle.status) || ctx.signal.aborted) return;
    if (Date.now() >= deadline || !askInput || handle.status !== 'input_required') return;
    const asked = Date.now();
    const outcome = await askInput(handle);
    if (outcome === 'gone') return;
    // A client that cannot take the question is not asked again: an answer may come from
    // elsewhere (HTTP, longrun_answer_task) until the bound.
    if (outcome === 'refused') askInput = undefined;
    else deadline += Date.now() - asked;
  }
}
