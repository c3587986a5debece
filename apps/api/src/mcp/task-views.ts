import { MIN_TTL_MS, type TaskHandle, type TaskResult } from '@longrun/core';

/**
 * What both MCP generations show of a longrun task, made from the engine's handle: the
 * `statusMessage`, the tool result of a finished task, and the input request of a parked one.
 */

/** A `CallToolResult` (without the generation's own fields such as V2's `resultType`). */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** The form an input request takes over MCP: an `elicitation/create` of mode `form`. */
export interface ElicitationParams {
  [key: string]: unknown;
  mode: 'form';
  message: string;
  requestedSchema: Record<string, unknown>;
}

/**
 * The handle's `statusMessage`, except that a failed task says why: its error's message (the
 * issue's rule, so an agent reading only the status sees the cause).
 */
export function statusMessageOf(handle: Pick<TaskHandle, 'status' | 'statusMessage' | 'error'>) {
  return handle.status === 'failed' && handle.error ? handle.error.message : handle.statusMessage;
}

/**
 * A finished task as a tool result: a completed job's result (an object becomes
 * `structuredContent` too), a failed or cancelled one's error with `isError: true`.
 * @example toolResultOf({ taskId, status: 'completed', result: { n: 1 } }).structuredContent // { n: 1 }
 */
export function toolResultOf(
  finished: Pick<TaskResult, 'status' | 'result' | 'error'>,
): ToolResult {
  if (finished.status === 'completed') {
    const value = finished.result ?? null;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    return isPlainObject(value)
      ? { content: [{ type: 'text', text }], structuredContent: value }
      : { content: [{ type: 'text', text }] };
  }
  const error = finished.error ?? { message: `The task was ${finished.status}` };
  return {
    content: [{ type: 'text', text: error.message }],
    structuredContent: { status: finished.status, error },
    isError: true,
  };
}

/**
 * The key of the task's current input request: unique over the task's life (both protocols
 * require it), and the same on every read while that request is open. A parked task's record
 * does not change until it is answered, so the time it was parked identifies the request.
 */
export function inputKeyOf(handle: Pick<TaskHandle, 'status' | 'lastUpdatedAt'>): string | null {
  if (handle.status !== 'input_required') return null;
  return `input-${Date.parse(handle.lastUpdatedAt).toString(36)}`;
}

/** The task's open input request as elicitation params, or null when it has none. */
export function elicitationOf(handle: TaskHandle): ElicitationParams | null {
  if (handle.status !== 'input_required' || !handle.inputRequest) return null;
  const { $schema: _dialect, ...requestedSchema } = handle.inputRequest.schema;
  return { mode: 'form', message: handle.inputRequest.message, requestedSchema };
}

/**
 * A ttl a protocol asked for, clamped to what the engine accepts: the protocols' model is "the
 * server may give less, and says what it gave" (the HTTP API refuses instead). `null` (asked for
 * no limit) gets the longest; nothing asked gets the engine's default (undefined).
 * @example clampTtl(10 * 86_400_000, 7 * 86_400_000) // 604800000
 */
export function clampTtl(ttl: number | null | undefined, maxTtlMs: number): number | undefined {
  if (ttl === undefined) return undefined;
  if (ttl === null || !Number.isFinite(ttl)) return maxTtlMs;
  return Math.min(maxTtlMs, Math.max(MIN_TTL_MS, Math.round(ttl)));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
