import { DurableTaskError } from '@longrun/core';
import type { StepOutcome } from '../commands/index.js';

/**
 * A durable error that fails the task at once whatever its code: a step's `storage-budget`
 * (issue 40; a child's, the same code, is retried).
 */
export class FinalDurableError extends DurableTaskError {}

/** The error a step refused by its record throws (issue 40): both fail the task. */
export function refusal(
  name: string,
  outcome: Extract<StepOutcome, { kind: 'tooMany' | 'overBudget' }>,
): DurableTaskError {
  if (outcome.kind === 'tooMany') {
    return new DurableTaskError(
      'too-many-steps',
      `Step "${name}" is past the ${outcome.count} steps a task may record (LONGRUN_MAX_STEPS): split the work into child tasks`,
    );
  }
  return new FinalDurableError(
    'storage-budget',
    `The result of step "${name}" does not fit the tenant's storage budget (${outcome.usedBytes} bytes used): room comes back in ${outcome.retryAfterMs} ms`,
    outcome.retryAfterMs,
  );
}
