import { RESERVED_JOB_TYPE_PREFIX } from '@longrun/core';
import type { RegisteredJobType } from '@longrun/engine';

/**
 * A job type as an MCP tool: what `tools/list` shows (both generations) and how a call of it
 * without tasks is served.
 */
export interface ToolEntry {
  name: string;
  description: string;
  /** The type's input JSON Schema exactly as its workers registered it (an object schema). */
  inputSchema: Record<string, unknown>;
  /**
   * `optional` for a short tool (a call may wait for its result), `required` for the rest: a
   * client must call them as tasks (2025-11-25 `execution.taskSupport`).
   */
  taskSupport: 'optional' | 'required';
  /** For a short tool: how long a call without tasks waits for the result. */
  plainWaitMs?: number;
}

/**
 * Longest run a job type may declare (`timeoutMs`) and still count as a short tool: its runs are
 * bounded, so a client without tasks can wait for the result in one request.
 */
export const SHORT_TOOL_MAX_MS = 30_000;

/** The most a call without tasks waits, whatever the type's attempts and backoff add up to. */
export const PLAIN_CALL_MAX_WAIT_MS = 120_000;

/** What MCP allows in a tool name; a job type named otherwise is not offered as a tool. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * The registered job types as tools, by name. A type's description is its input schema's
 * `description` (zod `.describe()`), else a sentence made from what the registry knows.
 * @example toolsFrom(engine.knownJobTypes).map((t) => t.name) // ['approval', 'echo', …]
 */
export function toolsFrom(types: Iterable<RegisteredJobType>): ToolEntry[] {
  const tools: ToolEntry[] = [];
  for (const type of types) {
    // A reserved name (registered before the registry refused it) would shadow a follow tool.
    if (!TOOL_NAME.test(type.name) || type.name.startsWith(RESERVED_JOB_TYPE_PREFIX)) continue;
    const wait = plainWaitMs(type);
    tools.push({
      name: type.name,
      description: describe(type),
      inputSchema:
        type.inputSchema.type === 'object'
          ? type.inputSchema
          : { ...type.inputSchema, type: 'object' },
      taskSupport: wait === undefined ? 'required' : 'optional',
      ...(wait === undefined ? {} : { plainWaitMs: wait }),
    });
  }
  return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** One tool by name, or undefined (unknown, or not a valid tool name). */
export function toolNamed(types: Iterable<RegisteredJobType>, name: string): ToolEntry | undefined {
  return toolsFrom(types).find((t) => t.name === name);
}

function describe(type: RegisteredJobType): string {
  const own = type.inputSchema.description;
  if (typeof own === 'string' && own.trim() !== '') return own;
  const attempts = type.attempts > 1 ? `, up to ${type.attempts} attempts` : '';
  return `Runs the longrun job type "${type.name}" as a task${attempts}.`;
}

/**
 * How long a plain call may wait: every attempt's timeout and the backoffs between them, for a
 * type whose runs are bounded by a `timeoutMs` of at most `SHORT_TOOL_MAX_MS`; undefined otherwise.
 */
function plainWaitMs(type: RegisteredJobType): number | undefined {
  if (type.timeoutMs === undefined || type.timeoutMs > SHORT_TOOL_MAX_MS) return undefined;
  let total = 0;
  for (let attempt = 1; attempt <= type.attempts; attempt++) {
    total += type.timeoutMs + (attempt > 1 ? type.backoffMs * 2 ** (attempt - 2) : 0);
  }
  // Room for the queue and the write-back of the result.
  return Math.min(total + 5_000, PLAIN_CALL_MAX_WAIT_MS);
}
