import type { TaskEngine } from '@longrun/engine';
import { JSONRPC, type RpcError } from './errors.js';

/** What answering a task's input request through MCP did. */
export type AnswerOutcome =
  | { kind: 'answered' }
  /** The client declined (or dismissed) the request: the task cannot go on, so it is cancelled. */
  | { kind: 'cancelled' }
  /** The answer does not fit the request's schema (the task still waits). */
  | { kind: 'refused'; error: RpcError }
  /** The task no longer waits for this answer (answered meanwhile, finished, cancelled). */
  | { kind: 'stale' }
  | { kind: 'notFound' };

/**
 * Applies an `ElicitResult` (`{action, content}`) to the task's open input request, as both
 * generations receive it: the 2025-11-25 client's answer to `elicitation/create`, and a V2
 * `tasks/update` input response. `accept` answers the task (the engine validates the content
 * against the request's schema and wakes the job); `decline` and `cancel` cancel the task, whose
 * handler cannot continue without the answer.
 * @example await answerElicitation(engine, 'acme', id, { action: 'accept', content: { approved: true } })
 */
export async function answerElicitation(
  engine: TaskEngine,
  tenant: string,
  taskId: string,
  result: unknown,
): Promise<AnswerOutcome> {
  const parsed = readElicitResult(result);
  if (!parsed) {
    return {
      kind: 'refused',
      error: {
        code: JSONRPC.invalidParams,
        message: 'Expected an elicitation result {action, content}',
      },
    };
  }
  if (parsed.action !== 'accept') {
    const cancelled = await engine.cancel(tenant, taskId);
    if (cancelled.kind === 'cancelled') return { kind: 'cancelled' };
    return cancelled.kind === 'notFound' ? { kind: 'notFound' } : { kind: 'stale' };
  }
  const answered = await engine.answer(tenant, taskId, { input: parsed.content ?? {} });
  switch (answered.kind) {
    case 'answered':
      return { kind: 'answered' };
    case 'notFound':
      return { kind: 'notFound' };
    case 'conflict':
      return { kind: 'stale' };
    case 'invalid':
      return {
        kind: 'refused',
        error: {
          code: JSONRPC.invalidParams,
          message: `${answered.detail}: ${answered.errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
          data: { errors: answered.errors },
        },
      };
  }
}

function readElicitResult(
  value: unknown,
): { action: 'accept' | 'decline' | 'cancel'; content?: unknown } | null {
  if (typeof value !== 'object' || value === null) return null;
  const { action, content } = value as { action?: unknown; content?: unknown };
  if (action !== 'accept' && action !== 'decline' && action !== 'cancel') return null;
  return content === undefined ? { action } : { action, content };
}
