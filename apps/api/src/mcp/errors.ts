import type { SubmitOutcome } from '@longrun/engine';

/** JSON-RPC error codes the MCP door answers with (MCP 2026-07-28 numbers where it has them). */
export const JSONRPC = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  /** Implementation-defined: the engine refused the work (open-task cap, storage budget, …). */
  refused: -32000,
  headerMismatch: -32020,
  missingClientCapability: -32021,
  unsupportedProtocolVersion: -32022,
} as const;

/** The tasks extension's identifier (capabilities, `-32021` data). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** A JSON-RPC error object. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * Why a submit created nothing, as a JSON-RPC error: bad input is `-32602` with the fields named
 * (as the HTTP API's `errors`), the engine's limits are `-32000` with the problem's code.
 * @example submitError({ kind: 'full', openTasks: 10, cap: 10 }).code // -32000
 */
export function submitError(
  outcome: Exclude<SubmitOutcome, { kind: 'created' | 'replayed' }>,
): RpcError {
  switch (outcome.kind) {
    case 'invalid':
      return {
        code: JSONRPC.invalidParams,
        message: `${outcome.detail}: ${outcome.errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
        data: { errors: outcome.errors },
      };
    case 'full':
      return {
        code: JSONRPC.refused,
        message: `This tenant has ${outcome.openTasks} unfinished tasks (the cap is ${outcome.cap})`,
        data: { code: 'too-many-open-tasks' },
      };
    case 'overBudget':
      return {
        code: JSONRPC.refused,
        message: "This tenant's stored tasks take its storage budget",
        data: { code: 'storage-budget', retryAfterMs: outcome.retryAfterMs },
      };
    case 'keyReused':
    case 'keyInFlux':
      return {
        code: JSONRPC.refused,
        message: 'Idempotent request refused',
        data: { code: outcome.kind },
      };
  }
}

/** The error every generation answers for a missing, expired or foreign task (one message). */
export const TASK_NOT_FOUND: RpcError = {
  code: JSONRPC.invalidParams,
  message: 'Failed to retrieve task: Task not found',
};
