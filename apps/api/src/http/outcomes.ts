import { Problem, taskNotFound, type TaskStatus } from '@longrun/core';
import type {
  CompleteWaitpointOutcome,
  Conflict,
  CreateScheduleOutcome,
  Invalid,
  LeaseEnded,
  SubmitOutcome,
} from '@longrun/engine';

/**
 * The engine's outcomes as HTTP problems (RFC 9457): the one place the HTTP door turns them into
 * status codes. A route throws what this returns; `errorHandler` answers it.
 */
export function invalidProblem({ status, detail, errors }: Invalid): Problem {
  return new Problem({
    status,
    title: status === 400 ? 'Bad Request' : 'Unprocessable Content',
    detail,
    code: status === 400 ? 'invalid-request' : 'invalid-input',
    errors,
  });
}

/** 409 for a task in a status the call cannot act on. */
export function conflictProblem(
  { reason, status }: Conflict,
  verb: string,
  retryAfter: number,
): Problem {
  const extra = { taskStatus: status };
  switch (reason) {
    case 'terminal':
      return new Problem({
        status: 409,
        title: 'Task already finished',
        detail: `The task is ${status} and cannot be ${verb}`,
        code: 'terminal',
        extra,
      });
    case 'notTerminal':
      return new Problem({
        status: 409,
        title: 'Task not finished',
        detail:
          verb === 'forgotten'
            ? `The task is ${status}; cancel it first or wait for it to finish`
            : `The task is ${status}; poll its handle and retry`,
        code: 'not-terminal',
        ...(verb === 'forgotten' ? {} : { retryAfter }),
        extra,
      });
    case 'notAwaitingInput':
      return new Problem({
        status: 409,
        title: 'Task is not waiting for input',
        detail: `The task is ${status}`,
        code: 'not-awaiting-input',
        extra,
      });
    case 'questionChanged':
      return new Problem({
        status: 409,
        title: 'Task asks another question',
        detail:
          'The task was answered meanwhile and now asks another question: read its inputRequest and answer that',
        code: 'question-changed',
        extra,
      });
  }
}

/** The problem for a submit that created nothing. */
/** `POST /v1/waitpoints/{id}`'s refusals (issue 29). */
export function waitpointProblem(
  outcome: Exclude<CompleteWaitpointOutcome, { kind: 'completed' }>,
): Problem {
  if (outcome.kind === 'notFound') return taskNotFound();
  if (outcome.kind === 'invalid') return invalidProblem(outcome);
  if (outcome.kind === 'overBudget') return storageBudgetProblem(outcome);
  if (outcome.kind === 'taskFinished') {
    return conflictProblem(
      { kind: 'conflict', reason: 'terminal', status: outcome.status },
      'sent data',
      1,
    );
  }
  if (outcome.kind === 'timedOut') {
    return new Problem({
      status: 409,
      title: 'Waitpoint timed out',
      detail:
        'This waitpoint timed out before data came: its task went on without it, and a waitpoint has one outcome',
      code: 'waitpoint-timed-out',
    });
  }
  return new Problem({
    status: 409,
    title: 'Waitpoint already completed',
    detail: 'This waitpoint was completed before; a waitpoint is completed once',
    code: 'waitpoint-completed',
  });
}

export function submitProblem(
  outcome: Exclude<SubmitOutcome, { kind: 'created' | 'replayed' }>,
  retryAfter: number,
): Problem {
  switch (outcome.kind) {
    case 'invalid':
      return invalidProblem(outcome);
    case 'full':
      return new Problem({
        status: 429,
        title: 'Too many open tasks',
        detail: `This tenant has ${outcome.openTasks} unfinished tasks (the cap is ${outcome.cap}); wait for some to finish`,
        code: 'too-many-open-tasks',
        retryAfter,
      });
    case 'overBudget':
      return storageBudgetProblem(outcome);
    case 'keyReused':
    case 'keyInFlux':
      return idempotencyProblem(outcome.kind, 'task');
  }
}

/** The tenant's storage budget has no room for what was sent (a submit, waitpoint data): 429. */
function storageBudgetProblem(outcome: {
  usedBytes: number;
  maxBytes: number;
  retryAfterMs: number;
}): Problem {
  return new Problem({
    status: 429,
    title: 'Storage budget used up',
    detail: `This tenant's stored tasks take ${outcome.usedBytes} bytes of its ${outcome.maxBytes}-byte storage budget; delete finished tasks you have collected (DELETE /v1/jobs/{id}) or wait for them to expire`,
    code: 'storage-budget',
    retryAfter: Math.max(1, Math.ceil(outcome.retryAfterMs / 1000)),
  });
}

/** An Idempotency-Key used with another body (`422`), or whose task or schedule is in flux. */
export function idempotencyProblem(
  kind: 'keyReused' | 'keyInFlux',
  what: 'task' | 'schedule',
): Problem {
  return kind === 'keyReused'
    ? new Problem({
        status: 422,
        title: 'Idempotency-Key reused',
        detail: 'This Idempotency-Key was used with a different request body',
        code: 'idempotency-key-reused',
      })
    : new Problem({
        status: 409,
        title: 'Idempotent request in flux',
        detail: `The ${what} for this Idempotency-Key is being created or removed; retry`,
        code: 'idempotency-conflict',
        retryAfter: 1,
      });
}

/** The problem for a schedule create refused for a reason other than its body. */
export function scheduleProblem(
  outcome: Extract<CreateScheduleOutcome, { kind: 'tooManySchedules' | 'keyReused' | 'keyInFlux' }>,
): Problem {
  if (outcome.kind !== 'tooManySchedules') return idempotencyProblem(outcome.kind, 'schedule');
  return new Problem({
    status: 409,
    title: 'Too many schedules',
    detail: `This tenant has ${outcome.schedules} schedules (the cap is ${outcome.cap}); delete one first`,
    code: 'too-many-schedules',
  });
}

/** Any outcome that is not the call's success, as the problem to answer. */
export function failure(
  outcome: { kind: 'notFound' } | Conflict | Invalid,
  verb: string,
  retryAfter: number,
): Problem {
  if (outcome.kind === 'notFound') return taskNotFound();
  if (outcome.kind === 'invalid') return invalidProblem(outcome);
  return conflictProblem(outcome, verb, retryAfter);
}

export type { TaskStatus };

/** A lease call's answer when its run cannot go on (decision 62): the one mapping of them. */
export function leaseProblem(
  outcome: LeaseEnded | { kind: 'resultRefused'; message: string },
): Problem {
  switch (outcome.kind) {
    case 'notFound':
      return new Problem({ status: 404, title: 'Lease not found', code: 'lease-not-found' });
    case 'expired':
      return new Problem({
        status: 409,
        title: 'Lease expired',
        detail: 'No heartbeat renewed the lease in time: the job runs again elsewhere',
        code: 'lease-expired',
      });
    case 'finished':
      return new Problem({
        status: 409,
        title: 'Task ended',
        detail: `The task is ${outcome.status}: stop the run`,
        code: 'lease-ended',
        extra: { taskStatus: outcome.status },
      });
    case 'timedOut':
      return new Problem({
        status: 409,
        title: 'Task ended',
        detail: `The run took longer than its ${outcome.timeoutMs} ms timeout: it was failed or is retried`,
        code: 'lease-ended',
      });
    case 'resultRefused':
      return new Problem({
        status: 422,
        title: 'Result too large',
        detail: `${outcome.message}; the task has failed`,
        code: 'result-too-large',
        extra: { taskStatus: 'failed' },
      });
  }
}
